/** `cli webhooks list` and `cli events tail` (operators, contract §10): real CLI processes. */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { call, createTestContext, seedBusiness, type TestContext } from '../helpers/context'
import { createLead } from '../helpers/leads'
import { createEndpoint } from '../helpers/webhooks'
import { relayAll } from '../helpers/relay'

// Each test spawns the CLI as a real process, some several times: seconds each on a loaded machine.
setDefaultTimeout(60_000)

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext({ WEBHOOK_ALLOW_HOSTS: '127.0.0.1' })
})
afterAll(() => ctx.close())

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(['bun', 'run', 'cli/index.ts', ...args], {
    env: { ...process.env, DATABASE_URL: ctx.config.databaseUrl },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

test('webhooks list shows each endpoint with its status and delivery counts, never a secret', async () => {
  const biz = await seedBusiness(ctx)
  const { id, secret } = await createEndpoint(ctx, biz.apiKey, 'http://127.0.0.1:9/hook', ['lead.*'])
  await call(ctx.app, 'PATCH', `/v1/webhook_endpoints/${id}`, { key: biz.apiKey, body: { status: 'disabled' } })
  const out = await cli(['webhooks', 'list', '--business', String(biz.id), '--json'])
  expect(out.code, out.stderr).toBe(0)
  const parsed = JSON.parse(out.stdout)
  expect(parsed.endpoints).toEqual([
    expect.objectContaining({ id, status: 'disabled', disabled_reason: 'disabled by a PATCH request', enabled_events: ['lead.*'] }),
  ])
  expect(out.stdout).not.toContain(secret.slice(6))
  const text = await cli(['webhooks', 'list', '--business', String(biz.id)])
  expect(text.stdout).toContain(`#${id}  disabled  http://127.0.0.1:9/hook`)
  expect((await cli(['webhooks', 'list', '--business', '2147483000'])).code).toBe(1)
})

test("events tail prints the business's events in sequence order", async () => {
  const biz = await seedBusiness(ctx)
  const ids = [await createLead(ctx, biz.apiKey), await createLead(ctx, biz.apiKey)]
  await relayAll(ctx.deps)
  const out = await cli(['events', 'tail', '--business', String(biz.id), '--after', '0', '--once', '--json'])
  expect(out.code, out.stderr).toBe(0)
  const parsed = JSON.parse(out.stdout)
  expect(parsed.events.map((e: any) => [e.sequence, e.type, e.data.object.id])).toEqual([
    [1, 'lead.created', ids[0]],
    [2, 'lead.created', ids[1]],
  ])
  expect(parsed.next_after).toBe(2)
  const text = await cli(['events', 'tail', '--business', String(biz.id), '--after', '1', '--once'])
  expect(text.stdout.trim().split('\n').length).toBe(1)
  expect(text.stdout).toContain('lead.created')
})
