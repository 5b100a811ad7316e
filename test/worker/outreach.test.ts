import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Job } from 'bullmq'
import IORedis from 'ioredis'
import { sql } from 'drizzle-orm'
import { createInquiry } from '../../shared/leads/operations'
import { disableOutreachEndpoint, findOutreachDelivery } from '../../db/queries/outreach'
import { createLogger } from '../../shared/platform/logger'
import { inquiryValuesOf } from '../../shared/leads/inquiry-input'
import { verifyWebhookSignature } from '../../shared/outreach/signature'
import { sweepOutreachDeliveries } from '../../shared/outreach/operations'
import { processOutreach } from '../../worker/processors/outreach'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type TestContext } from '../helpers/context'
import { attemptsOf, configureEndpoint, deliveriesOf, inquiryBody } from '../helpers/outreach'
import { freePort } from '../helpers/processes'

/** What the local receiver saw. */
interface Received {
  path: string
  headers: Headers
  body: string
  at: number
}

const TIMEOUT_MS = 3000
let ctx: TestContext
let workers: RunningWorkers
let receiver: ReturnType<typeof Bun.serve>
const received: Received[] = []
/** Per-path answers: a status list consumed in order (last one repeats), or 'hang'. */
const plans = new Map<string, (number | 'hang')[]>()
const hanging: (() => void)[] = []

beforeAll(async () => {
  // A tiny backoff so retries happen within the test (docs/outreach.md: OUTREACH_BACKOFF_BASE_MS).
  ctx = await createTestContext({ OUTREACH_BACKOFF_BASE_MS: '40', OUTREACH_BACKOFF_MAX_MS: '150', OUTREACH_TIMEOUT_MS: String(TIMEOUT_MS) })
  workers = await startWorkers(ctx.config, createLogger('silent'), ['outreach'])
  receiver = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname
      received.push({ path, headers: req.headers, body: await req.text(), at: Date.now() })
      const plan = plans.get(path) ?? [200]
      const next = plan.length > 1 ? plan.shift()! : plan[0]
      if (next === 'hang') return new Promise<Response>((resolve) => hanging.push(() => resolve(new Response('late', { status: 200 }))))
      return new Response(next === 204 ? null : 'ok', { status: next })
    },
  })
})
afterAll(async () => {
  for (const release of hanging) release()
  await workers?.close(5000)
  receiver?.stop(true)
  await ctx?.close()
})

const url = (path: string) => `http://127.0.0.1:${receiver.port}${path}`
const receivedAt = (path: string) => received.filter((r) => r.path === path)
const stateOf = async (deliveryId: string) => (await findOutreachDelivery(ctx.deps.database.db, deliveryId))?.state
const deps = () => ({ config: ctx.config, database: ctx.deps.database, queues: ctx.deps.queues, logger: ctx.deps.logger })
const fakeJob = (deliveryId: string, attemptsMade = 0) => ({ data: { deliveryId }, attemptsMade, opts: { attempts: 20 } }) as unknown as Job

/** An inquiry whose delivery row exists but whose job was never queued (as after a failed enqueue). */
async function unqueuedDelivery(businessId: number, overrides: Record<string, unknown> = {}): Promise<string> {
  const values = inquiryValuesOf(inquiryBody(overrides) as never)
  const created = await ctx.deps.database.db.transaction((tx) => createInquiry(tx, businessId, values))
  return created.deliveryId!
}

describe('outreach worker', () => {
  test('delivers the exact body of contract §8 with verifiable signature headers', async () => {
    const b = await seedBusiness(ctx)
    const secret = await configureEndpoint(ctx, b.id, url('/exact'))
    const propertyId = (
      await call(ctx.app, 'POST', '/v1/properties', {
        key: b.apiKey,
        body: { operations: ['venta'], type: 'casa', title: 'Casa', pricing: { sale: 1 }, location: { city: 'Valencia' }, area: { total: 1 } },
      })
    ).body.id
    const res = await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: b.apiKey, body: inquiryBody({ property_id: propertyId }) })
    expect(res.status, res.text).toBe(200)
    expect(res.body.outreach).toBe('queued')
    const [delivery] = await deliveriesOf(ctx, b.id)
    await eventually(async () => (await stateOf(delivery.id)) === 'delivered', { what: 'delivery' })

    const [got] = receivedAt('/exact')
    const { created_at } = JSON.parse(got.body)
    expect(got.body).toBe(
      JSON.stringify({
        type: 'inquiry.created',
        delivery_id: delivery.id,
        created_at,
        inquiry_id: res.body.inquiry_id,
        lead_id: res.body.lead_id,
        lead_created: true,
        property_id: propertyId,
        contact: { name: 'Ana García', email: 'ana@example.com', phone: '+34600111222' },
        message: '¿Sigue disponible? Me gustaría visitarlo.',
        source: 'web-contact-form',
        source_page: 'https://inmobiliaria.example/propiedades/1',
      }),
    )
    const [inquiry] = await ctx.deps.database.db.execute<{ created_at: Date }>(sql`select created_at from lead_inquiries where id = ${res.body.inquiry_id}`)
    expect(created_at).toBe(new Date(inquiry.created_at).toISOString())

    expect(got.headers.get('content-type')).toBe('application/json')
    expect(got.headers.get('x-webhook-id')).toBe(delivery.id)
    const ts = got.headers.get('x-webhook-timestamp')!
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(30)
    const signature = got.headers.get('x-webhook-signature')!
    expect(signature).toMatch(new RegExp(`^t=${ts},v1=[0-9a-f]{64}$`))
    expect(verifyWebhookSignature(secret, signature, got.body)).toEqual({ ok: true, timestamp: Number(ts) })
    expect(verifyWebhookSignature('whsec_wrong', signature, got.body).ok).toBe(false)

    const attempts = await attemptsOf(ctx, delivery.id)
    expect(attempts).toEqual([{ attempt: 1, status_code: 200, latency_ms: expect.any(Number), error: null }])
    expect((await deliveriesOf(ctx, b.id))[0]).toMatchObject({ state: 'delivered', attempts: 1, last_status_code: 200, last_error: null })
  })

  test('a 500 then 200 endpoint: two attempts recorded, then delivered; same id and body on the retry', async () => {
    const b = await seedBusiness(ctx)
    plans.set('/flaky', [500, 204])
    const secret = await configureEndpoint(ctx, b.id, url('/flaky'))
    const res = await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: b.apiKey, body: inquiryBody() })
    const [delivery] = await deliveriesOf(ctx, b.id)
    await eventually(async () => (await stateOf(delivery.id)) === 'delivered', { what: 'delivery after a retry' })
    expect(res.body.outreach).toBe('queued')
    expect((await attemptsOf(ctx, delivery.id)).map((a) => [a.attempt, a.status_code, a.error])).toEqual([
      [1, 500, null],
      [2, 204, null],
    ])
    const [first, second] = receivedAt('/flaky')
    expect(second.headers.get('x-webhook-id')).toBe(first.headers.get('x-webhook-id'))
    expect(second.body).toBe(first.body)
    expect(verifyWebhookSignature(secret, second.headers.get('x-webhook-signature'), second.body).ok).toBe(true)
    expect((await deliveriesOf(ctx, b.id))[0]).toMatchObject({ attempts: 2, last_status_code: 204 })
  })

  test("a hanging endpoint of business A does not delay business B's delivery", async () => {
    const a = await seedBusiness(ctx)
    const b = await seedBusiness(ctx)
    plans.set('/hang', ['hang'])
    await configureEndpoint(ctx, a.id, url('/hang'))
    await configureEndpoint(ctx, b.id, url('/fast'))
    for (let i = 0; i < 5; i++) {
      await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: a.apiKey, body: inquiryBody({ contact: { name: `A${i}`, phone: `+3460000010${i}` } }) })
    }
    await eventually(async () => receivedAt('/hang').length >= 5, { what: 'A deliveries in flight' })
    await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: b.apiKey, body: inquiryBody() })
    const [bDelivery] = await deliveriesOf(ctx, b.id)
    await eventually(async () => (await stateOf(bDelivery.id)) === 'delivered', { what: "B's delivery", timeoutMs: TIMEOUT_MS })
    // B went through while all of A's attempts were still hanging (none timed out and recorded yet).
    const aDeliveries = await deliveriesOf(ctx, a.id)
    expect(aDeliveries.every((d) => d.state === 'pending' && d.attempts === 0)).toBe(true)
    // Then A's attempts time out and are recorded as such, to be retried.
    await eventually(async () => (await attemptsOf(ctx, aDeliveries[0].id)).length > 0, { what: 'timeout attempt', timeoutMs: 10_000 })
    const [attempt] = await attemptsOf(ctx, aDeliveries[0].id)
    expect(attempt).toMatchObject({ attempt: 1, status_code: null, error: `timeout after ${TIMEOUT_MS} ms` })
    expect(attempt.latency_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50)
    await disableOutreachEndpoint(ctx.deps.database.db, a.id)
  })

  test('an endpoint that always fails: 20 attempts, then the delivery is failed', async () => {
    const b = await seedBusiness(ctx)
    plans.set('/down', [503])
    await configureEndpoint(ctx, b.id, url('/down'))
    await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: b.apiKey, body: inquiryBody() })
    const [delivery] = await deliveriesOf(ctx, b.id)
    await eventually(async () => (await stateOf(delivery.id)) === 'failed', { what: 'final failure', timeoutMs: 20_000 })
    const attempts = await attemptsOf(ctx, delivery.id)
    expect(attempts.map((a) => a.attempt)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    expect(attempts.every((a) => a.status_code === 503)).toBe(true)
    expect((await deliveriesOf(ctx, b.id))[0]).toMatchObject({ state: 'failed', attempts: 20, last_status_code: 503 })
    const job = await ctx.deps.queues.get('outreach').getJob(`delivery-${delivery.id}`)
    expect(await job?.getState()).toBe('failed')
    expect(job?.failedReason).toContain('no attempts left')
  }, 30_000)

  test('a connection error counts as an attempt with its error and schedules the next one', async () => {
    const b = await seedBusiness(ctx)
    await configureEndpoint(ctx, b.id, `http://127.0.0.1:${await freePort()}/closed`)
    const id = await unqueuedDelivery(b.id)
    await expect(processOutreach(deps(), fakeJob(id))).rejects.toThrow()
    const [attempt] = await attemptsOf(ctx, id)
    expect(attempt).toMatchObject({ attempt: 1, status_code: null })
    expect(attempt.error).toBeString()
    const row = await findOutreachDelivery(ctx.deps.database.db, id)
    expect(row).toMatchObject({ state: 'pending', attempts: 1 })
    expect(row!.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now() - 1000)
    // Its job was never queued; the sweep of a later test may pick it up: let that end quietly.
    await disableOutreachEndpoint(ctx.deps.database.db, b.id)
  })

  test('an endpoint disabled meanwhile: the delivery is skipped, nothing is sent, no retry', async () => {
    const b = await seedBusiness(ctx)
    await configureEndpoint(ctx, b.id, url('/disabled'))
    const id = await unqueuedDelivery(b.id)
    await disableOutreachEndpoint(ctx.deps.database.db, b.id)
    // The job completes: a skip is recorded on the delivery and needs no operator, so it must
    // not wait in the failed set, which keeps jobs until an operator acts.
    expect(await processOutreach(deps(), fakeJob(id))).toEqual({ outcome: 'ended', deliveryId: id, state: 'skipped', reason: 'outreach endpoint disabled' })
    expect(await findOutreachDelivery(ctx.deps.database.db, id)).toMatchObject({ state: 'skipped', lastError: 'outreach endpoint disabled', attempts: 0 })
    expect(receivedAt('/disabled')).toEqual([])
  })

  test('safe to run twice: a delivered delivery is not sent again', async () => {
    const b = await seedBusiness(ctx)
    await configureEndpoint(ctx, b.id, url('/twice'))
    const id = await unqueuedDelivery(b.id)
    expect(await processOutreach(deps(), fakeJob(id))).toMatchObject({ outcome: 'delivered', attempt: 1 })
    expect(await processOutreach(deps(), fakeJob(id))).toEqual({ outcome: 'not-pending', deliveryId: id, state: 'delivered' })
    expect(receivedAt('/twice').length).toBe(1)
    expect((await attemptsOf(ctx, id)).length).toBe(1)
    expect(await processOutreach(deps(), fakeJob('dlv_missing'))).toEqual({ outcome: 'gone', deliveryId: 'dlv_missing' })
    await expect(processOutreach(deps(), { data: { nope: 1 } } as unknown as Job)).rejects.toThrow('invalid outreach payload')
  })

  test('the sweep queues a pending delivery that has no job; the worker then delivers it', async () => {
    const b = await seedBusiness(ctx)
    await configureEndpoint(ctx, b.id, url('/swept'))
    const id = await unqueuedDelivery(b.id)
    // Too young: the API may still be enqueueing it.
    expect((await sweepOutreachDeliveries(deps())).requeued).toBe(0)
    await ctx.deps.database.db.execute(sql`update outreach_deliveries set created_at = now() - interval '2 minutes' where id = ${id}`)
    const swept = await sweepOutreachDeliveries(deps())
    expect(swept.requeued).toBeGreaterThanOrEqual(1)
    await eventually(async () => (await stateOf(id)) === 'delivered', { what: 'swept delivery' })
    expect(receivedAt('/swept').length).toBe(1)
  })

  test('the sweep leaves a pending delivery that has a live job alone', async () => {
    const b = await seedBusiness(ctx)
    await configureEndpoint(ctx, b.id, url('/later'))
    const id = await unqueuedDelivery(b.id)
    const job = await ctx.deps.queues.enqueue('outreach', { deliveryId: id }, { delay: 60_000 })
    await ctx.deps.database.db.execute(sql`update outreach_deliveries set created_at = now() - interval '2 minutes' where id = ${id}`)
    await sweepOutreachDeliveries(deps())
    const after = await ctx.deps.queues.get('outreach').getJob(job.id!)
    expect(await after?.getState()).toBe('delayed')
    expect(after?.timestamp).toBe(job.timestamp)
    expect(await stateOf(id)).toBe('pending')
    await disableOutreachEndpoint(ctx.deps.database.db, b.id)
  })
})

describe('Redis down when the inquiry is accepted', () => {
  let redisProc: ReturnType<typeof Bun.spawn> | undefined
  afterAll(() => {
    redisProc?.kill()
  })

  test('the answer is still 200 "queued", the delivery waits in PostgreSQL, and the sweep sends it later', async () => {
    const port = await freePort()
    redisProc = Bun.spawn(['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdout: 'ignore',
      stderr: 'ignore',
    })
    const probe = new IORedis(`redis://127.0.0.1:${port}`, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
    probe.on('error', () => {})
    await eventually(
      async () => {
        await probe.connect().catch(() => {})
        return (await probe.ping()) === 'PONG'
      },
      { what: 'private redis' },
    )
    probe.disconnect()
    const api = await createTestContext({ REDIS_URL: `redis://127.0.0.1:${port}` })
    try {
      const b = await seedBusiness(api)
      await configureEndpoint(api, b.id, url('/after-outage'))
      redisProc.kill()
      await redisProc.exited
      const res = await call(api.app, 'POST', '/v1/leads/inquiries', { key: b.apiKey, body: inquiryBody() })
      expect(res.status, res.text).toBe(200)
      expect(res.body.outreach).toBe('queued')
      const [delivery] = await deliveriesOf(ctx, b.id)
      expect(delivery.state).toBe('pending')
      expect(api.logs.some((l) => l.includes('outreach enqueue failed') && l.includes(delivery.id))).toBe(true)

      // Later, a worker's maintenance sweep (shared Redis) finds it and it is delivered.
      await ctx.deps.database.db.execute(sql`update outreach_deliveries set created_at = now() - interval '2 minutes' where id = ${delivery.id}`)
      await sweepOutreachDeliveries(deps())
      await eventually(async () => (await stateOf(delivery.id)) === 'delivered', { what: 'delivery after the outage' })
      expect(receivedAt('/after-outage').length).toBe(1)
    } finally {
      await api.close().catch(() => {})
    }
  })
})
