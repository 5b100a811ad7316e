/**
 * Fairness (contract §10.2): one business's slow endpoint never delays another business's
 * deliveries. Business A's receiver holds every request unanswered and A has a backlog; business
 * B's deliveries, made after A's backlog, all arrive while A's requests are still held, on one
 * worker process, and A never has more requests in flight than its share.
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
const SHARE = 4

beforeAll(async () => {
  // A timeout longer than the test: A's requests stay in flight until the receiver releases them.
  ctx = await createTestContext({ WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_ENDPOINT_CONCURRENCY: String(SHARE) })
  receiver = startReceiver()
})
afterAll(async () => {
  receiver?.release('/slow')
  await workers?.close(10_000)
  receiver?.stop()
  await ctx?.close()
})

test('a business whose endpoint never answers does not delay another business', async () => {
  const [slow, fast] = [await seedBusiness(ctx), await seedBusiness(ctx)]
  receiver.plans.set('/slow', ['hold'])
  const slowEndpoint = await createEndpoint(ctx, slow.apiKey, receiver.url('/slow'), ['lead.created'])
  const fastEndpoint = await createEndpoint(ctx, fast.apiKey, receiver.url('/fast'), ['lead.created'])
  // A's backlog first: 40 leads, each a delivery to the receiver that holds them. The worker
  // (and its outbox relay) starts once they are all written, so A's first run finds the whole
  // backlog due and takes as many at once as A's share allows.
  for (let i = 0; i < 40; i++) await createLead(ctx, slow.apiKey)
  workers = await startWorkers(ctx.config, createLogger('silent'), ['webhook-delivery'])
  await eventually(async () => receiver.held('/slow') === SHARE, {
    timeoutMs: 30_000,
    what: "A's endpoint to be busy with its share",
    get detail() {
      return `${receiver.held('/slow')} held`
    },
  })
  // Then B: each of its deliveries arrives while A's requests are all still held.
  for (let i = 0; i < 5; i++) {
    await createLead(ctx, fast.apiKey)
    await eventually(async () => receiver.at('/fast').length === i + 1, { timeoutMs: 30_000, what: `B's delivery ${i + 1}` })
  }
  expect(receiver.held('/slow')).toBe(SHARE)
  const slowStates = (await deliveriesOfEndpoint(ctx, slowEndpoint.id)).map((d) => d.state)
  expect(slowStates).toEqual(Array(40).fill('pending'))
  // B's answers are recorded as delivered (after the answer, so polled), A's requests still held.
  await eventually(async () => (await deliveriesOfEndpoint(ctx, fastEndpoint.id)).every((d) => d.state === 'delivered'), { what: "B's deliveries recorded" })
  expect(receiver.held('/slow')).toBe(SHARE)
  // Released, A's backlog goes through, never more than its share in flight.
  receiver.release('/slow')
  await eventually(async () => (await deliveriesOfEndpoint(ctx, slowEndpoint.id)).every((d) => d.state === 'delivered'), {
    timeoutMs: 30_000,
    what: "A's backlog delivered",
  })
  expect(receiver.mostInFlight('/slow')).toBe(SHARE)
}, 120_000)
