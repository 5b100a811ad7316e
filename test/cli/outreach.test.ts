import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { insertOutreachDelivery, recordOutreachAttempt } from '../../db/queries/outreach'
import { endpointSecretContext } from '../../shared/outreach/delivery'
import { openSecret } from '../../shared/platform/secret-box'
import { createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'

// Each test spawns the CLI as a real process, some several times: seconds each on a loaded machine.
setDefaultTimeout(60_000)

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const cli = async (...args: string[]) => {
  const proc = Bun.spawn(['bun', 'run', 'cli/index.ts', 'outreach', ...args], {
    cwd: `${import.meta.dir}/../..`,
    env: { ...process.env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}
const endpointRow = async (businessId: number) =>
  (
    await ctx.deps.database.db.execute<{ url: string; secret_encrypted: string; enabled: boolean }>(
      sql`select url, secret_encrypted, enabled from outreach_endpoints where business_id = ${businessId}`,
    )
  )[0]

describe('bun run cli outreach', () => {
  test('set prints the secret once, stores it only sealed; re-set rotates it', async () => {
    const b = await seedBusiness(ctx)
    const first = await cli('set', '--business', String(b.id), '--url', 'http://127.0.0.1:9/hook', '--json')
    expect(first.code, first.stderr).toBe(0)
    const out = JSON.parse(first.stdout)
    expect(out).toMatchObject({ business_id: b.id, url: 'http://127.0.0.1:9/hook', enabled: true, rotated: false })
    expect(out.secret).toMatch(/^whsec_/)
    const row = await endpointRow(b.id)
    expect(row.secret_encrypted).not.toContain(out.secret)
    expect(row.secret_encrypted).not.toContain(out.secret.slice(6))
    expect(openSecret(ctx.config.appSecret, row.secret_encrypted, endpointSecretContext(b.id))).toBe(out.secret)

    const second = await cli('set', '--business', String(b.id), '--url', 'https://hooks.example.com/crm')
    expect(second.code, second.stderr).toBe(0)
    const secret2 = second.stdout.match(/whsec_[A-Za-z0-9_-]+/)![0]
    expect(second.stdout).toContain('only time the secret is shown')
    expect(secret2).not.toBe(out.secret)
    const row2 = await endpointRow(b.id)
    expect(row2.url).toBe('https://hooks.example.com/crm')
    expect(openSecret(ctx.config.appSecret, row2.secret_encrypted, endpointSecretContext(b.id))).toBe(secret2)
  })

  test('show never prints the secret; disable turns it off; set enables it again', async () => {
    const b = await seedBusiness(ctx)
    const set = JSON.parse((await cli('set', '--business', String(b.id), '--url', 'http://localhost:1234/x', '--json')).stdout)
    const show = await cli('show', '--business', String(b.id), '--json')
    expect(show.code, show.stderr).toBe(0)
    expect(JSON.parse(show.stdout)).toEqual({
      business_id: b.id,
      url: 'http://localhost:1234/x',
      enabled: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    })
    expect(show.stdout).not.toContain('whsec_')
    expect(show.stdout).not.toContain(set.secret)
    const text = await cli('show', '--business', String(b.id))
    expect(text.stdout).toContain('enabled: true')
    expect(text.stdout).not.toContain('whsec_')

    const disabled = await cli('disable', '--business', String(b.id), '--json')
    expect(disabled.code, disabled.stderr).toBe(0)
    expect(JSON.parse(disabled.stdout)).toMatchObject({ business_id: b.id, enabled: false })
    expect((await endpointRow(b.id)).enabled).toBe(false)
    expect(JSON.parse((await cli('show', '--business', String(b.id), '--json')).stdout).enabled).toBe(false)
    await cli('set', '--business', String(b.id), '--url', 'http://localhost:1234/x')
    expect((await endpointRow(b.id)).enabled).toBe(true)
  })

  test('refusals: bad URL scheme, unknown business, nothing configured', async () => {
    const ftp = await cli('set', '--business', String(biz.id), '--url', 'ftp://example.com/x')
    expect(ftp.code).toBe(2)
    expect(ftp.stderr).toContain('http or https')
    const junk = await cli('set', '--business', String(biz.id), '--url', 'not a url')
    expect(junk.code).toBe(2)
    const unknown = await cli('show', '--business', '2147483000')
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('business 2147483000 does not exist')
    const none = await cli('show', '--business', String(biz.id))
    expect(none.code).toBe(1)
    expect(none.stderr).toContain('has no outreach endpoint')
    expect((await cli('disable', '--business', String(biz.id))).code).toBe(1)
    expect((await cli('frobnicate')).code).toBe(2)
  })

  test('deliveries lists state, attempts and each attempt, newest first', async () => {
    const b = await seedBusiness(ctx)
    const db = ctx.deps.database.db
    const [contact] = await db.execute<{ id: number }>(
      sql`insert into contacts (business_id, name, phone) values (${b.id}, 'Ana', '+34600000001') returning id`,
    )
    const [inquiry] = await db.execute<{ id: number }>(
      sql`insert into lead_inquiries (business_id, contact_id, contact_name, message) values (${b.id}, ${contact.id}, 'Ana', 'hola') returning id`,
    )
    await insertOutreachDelivery(db, { id: 'dlv_cli_old', businessId: b.id, inquiryId: inquiry.id, payload: {}, createdAt: new Date(Date.now() - 60_000) })
    await insertOutreachDelivery(db, { id: 'dlv_cli_new', businessId: b.id, inquiryId: inquiry.id, payload: {}, createdAt: new Date() })
    await recordOutreachAttempt(db, 'dlv_cli_old', { statusCode: 500, latencyMs: 12, error: null }, { state: 'pending', nextAttemptAt: new Date() })
    await recordOutreachAttempt(
      db,
      'dlv_cli_old',
      { statusCode: null, latencyMs: 10000, error: 'timeout after 10000 ms' },
      { state: 'pending', nextAttemptAt: new Date() },
    )
    await recordOutreachAttempt(db, 'dlv_cli_old', { statusCode: 204, latencyMs: 8, error: null }, { state: 'delivered' })

    const r = await cli('deliveries', '--business', String(b.id), '--json')
    expect(r.code, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out.business_id).toBe(b.id)
    expect(out.deliveries.map((d: { id: string }) => d.id)).toEqual(['dlv_cli_new', 'dlv_cli_old'])
    expect(out.deliveries[0]).toMatchObject({ state: 'pending', attempts: 0, attempt_log: [] })
    expect(out.deliveries[1]).toMatchObject({
      state: 'delivered',
      attempts: 3,
      last_status_code: 204,
      inquiry_id: inquiry.id,
      delivered_at: expect.any(String),
    })
    expect(out.deliveries[1].attempt_log).toEqual([
      { attempt: 1, attempted_at: expect.any(String), status_code: 500, latency_ms: 12, error: null },
      { attempt: 2, attempted_at: expect.any(String), status_code: null, latency_ms: 10000, error: 'timeout after 10000 ms' },
      { attempt: 3, attempted_at: expect.any(String), status_code: 204, latency_ms: 8, error: null },
    ])

    const limited = JSON.parse((await cli('deliveries', '--business', String(b.id), '--limit', '1', '--json')).stdout)
    expect(limited.deliveries.map((d: { id: string }) => d.id)).toEqual(['dlv_cli_new'])
    const text = await cli('deliveries', '--business', String(b.id))
    expect(text.stdout).toContain('dlv_cli_old')
    expect(text.stdout).toContain('#2')
    expect(text.stdout).toContain('timeout after 10000 ms')
    const none = await cli('deliveries', '--business', String(biz.id), '--json')
    expect(JSON.parse(none.stdout)).toEqual({ business_id: biz.id, deliveries: [] })
  })
})
