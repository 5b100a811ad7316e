/**
 * Exhausted jobs, outreach: `cli queues retry` of an exhausted delivery job really sends it again.
 * Before, the job went back to waiting but found its delivery `failed` and sent nothing, while
 * the CLI printed "retried". Real outreach worker, a local receiver, tiny backoffs from config.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { findOutreachDelivery } from '../../db/queries/outreach'
import { createLogger } from '../../shared/platform/logger'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type TestContext } from '../helpers/context'
import { attemptsOf, configureEndpoint, deliveriesOf, inquiryBody } from '../helpers/outreach'

// Each test spawns the CLI as a real process, some several times: seconds each on a loaded machine.
setDefaultTimeout(60_000)

let ctx: TestContext
let workers: RunningWorkers
let receiver: ReturnType<typeof Bun.serve>
let answer = 503
const received: string[] = []

beforeAll(async () => {
  ctx = await createTestContext({ OUTREACH_BACKOFF_BASE_MS: '5', OUTREACH_BACKOFF_MAX_MS: '10' })
  workers = await startWorkers(ctx.config, createLogger('silent'), ['outreach'])
  receiver = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      received.push(JSON.parse(await req.text()).delivery_id)
      return new Response(null, { status: answer })
    },
  })
})
afterAll(async () => {
  await workers?.close(5000)
  receiver?.stop(true)
  await ctx?.close()
})

const cli = async (...args: string[]) => {
  const proc = Bun.spawn(['bun', 'run', 'cli/index.ts', 'queues', ...args], {
    cwd: `${import.meta.dir}/../..`,
    env: { ...process.env, QUEUE_PREFIX: ctx.config.queuePrefix },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}
const stateOf = async (id: string) => (await findOutreachDelivery(ctx.deps.database.db, id))?.state

describe('queues retry --queue outreach', () => {
  test('a delivery failed after 20 attempts is sent again and delivered; attempt numbers continue', async () => {
    const b = await seedBusiness(ctx)
    await configureEndpoint(ctx, b.id, `http://127.0.0.1:${receiver.port}/hook`)
    answer = 503
    expect((await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: b.apiKey, body: inquiryBody() })).status).toBe(200)
    const [delivery] = await deliveriesOf(ctx, b.id)
    await eventually(async () => (await stateOf(delivery.id)) === 'failed', { what: 'the delivery to fail', timeoutMs: 20_000 })
    expect(await (await ctx.deps.queues.get('outreach').getJob(`delivery-${delivery.id}`))!.getState()).toBe('failed')

    // The receiver is fixed; the operator retries the failed job.
    answer = 204
    const r = await cli('retry', '--queue', 'outreach', '--id', `delivery-${delivery.id}`, '--json')
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({ queue: 'outreach', retried: 1, ids: [`delivery-${delivery.id}`], skipped: [] })
    await eventually(async () => (await stateOf(delivery.id)) === 'delivered', { what: 'the retried delivery', timeoutMs: 10_000 })
    expect(received.filter((id) => id === delivery.id)).toHaveLength(21)
    const attempts = await attemptsOf(ctx, delivery.id)
    expect(attempts.map((a) => a.attempt)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1))
    expect(attempts.at(-1)).toMatchObject({ status_code: 204, error: null })
  }, 40_000)
})
