/**
 * Fairness (contract §10.2): one business's slow endpoint never delays another business's
 * deliveries. Business A's receiver sleeps on every request and A has a backlog; business B's
 * deliveries, made after A's backlog, arrive as fast as if A did not exist, on one worker process.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createLogger } from '../../shared/platform/logger'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { createTestContext, eventually, seedBusiness, type TestContext } from '../helpers/context'
import { createLead } from '../helpers/leads'
import { createEndpoint, deliveriesOfEndpoint, startReceiver, type Receiver } from '../helpers/webhooks'

let ctx: TestContext
let workers: RunningWorkers
let receiver: Receiver
const SLEEP_MS = 2000

beforeAll(async () => {
  ctx = await createTestContext({ WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_ENDPOINT_CONCURRENCY: '4' })
  workers = await startWorkers(ctx.config, createLogger('silent'), ['webhook-delivery'])
  receiver = startReceiver()
})
afterAll(async () => {
  await workers?.close(10_000)
  receiver?.stop()
  await ctx?.close()
})

test('a business whose endpoint sleeps on every request does not delay another business', async () => {
  const [slow, fast] = [await seedBusiness(ctx), await seedBusiness(ctx)]
  receiver.plans.set('/slow', [`sleep:${SLEEP_MS}`])
  const slowEndpoint = await createEndpoint(ctx, slow.apiKey, receiver.url('/slow'), ['lead.created'])
  const fastEndpoint = await createEndpoint(ctx, fast.apiKey, receiver.url('/fast'), ['lead.created'])
  // A's backlog first: 40 leads, each a delivery to the sleeping receiver (4 at a time: 20 s of work).
  for (let i = 0; i < 40; i++) await createLead(ctx, slow.apiKey)
  await eventually(async () => receiver.at('/slow').length >= 4, { what: 'A\'s endpoint to be busy' })
  // Then B: each of its deliveries arrives well before A's sleep ends, one after another.
  const latencies: number[] = []
  for (let i = 0; i < 5; i++) {
    const sent = Date.now()
    await createLead(ctx, fast.apiKey)
    await eventually(async () => receiver.at('/fast').length === i + 1, { what: `B's delivery ${i + 1}`, timeoutMs: SLEEP_MS })
    latencies.push(receiver.at('/fast')[i].at - sent)
  }
  expect(Math.max(...latencies)).toBeLessThan(SLEEP_MS / 2)
  const slowStates = (await deliveriesOfEndpoint(ctx, slowEndpoint.id)).map((d) => d.state)
  expect(slowStates.filter((s) => s === 'pending').length).toBeGreaterThan(20)
  expect((await deliveriesOfEndpoint(ctx, fastEndpoint.id)).every((d) => d.state === 'delivered')).toBe(true)
  // A's endpoint never had more requests in flight than its share.
  const starts = receiver.at('/slow').map((r) => r.at)
  const windowMax = Math.max(...starts.map((t) => starts.filter((u) => u >= t && u < t + SLEEP_MS - 100).length))
  expect(windowMax).toBeLessThanOrEqual(4)
}, 30_000)
