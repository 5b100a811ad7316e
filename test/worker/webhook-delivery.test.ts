/**
 * Webhook deliveries end to end (contract §10.2, §15) with a real receiver on loopback, the real
 * relay and `webhook-delivery` worker: Standard Webhooks signatures verified by the reference
 * `standardwebhooks` package as an integrator's receiver would, retries with the same
 * `webhook-id`, 410, continuous failure, redirects, rotation with two signatures, redelivery,
 * and the deliveries log.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { Webhook } from 'standardwebhooks'
import { createLogger } from '../../shared/platform/logger'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createLead } from '../helpers/leads'
import { createEndpoint, deliveriesOfEndpoint, startReceiver, type Receiver } from '../helpers/webhooks'

let ctx: TestContext
let workers: RunningWorkers
let receiver: Receiver

const DISABLE_AFTER_MS = 1500

beforeAll(async () => {
  ctx = await createTestContext({
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    WEBHOOK_BACKOFF_BASE_MS: '50',
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_DISABLE_AFTER_MS: String(DISABLE_AFTER_MS),
  })
  workers = await startWorkers(ctx.config, createLogger('silent'), ['webhook-delivery'])
  receiver = startReceiver()
})
afterAll(async () => {
  await workers?.close(5000)
  receiver?.stop()
  await ctx?.close()
})

async function eventOf(biz: SeededBusiness, type: string, objectId: number) {
  const res = await call(ctx.app, 'GET', `/v1/events?types=${type}&limit=1000`, { key: biz.apiKey })
  return (res.body.data as any[]).find((e) => e.data.object.id === objectId)
}

describe('delivery', () => {
  test('a lead.created arrives signed as Standard Webhooks says; the reference library verifies it unchanged', async () => {
    const biz = await seedBusiness(ctx)
    const { id, secret } = await createEndpoint(ctx, biz.apiKey, receiver.url(`/ok-${biz.id}`), ['lead.created'])
    const leadId = await createLead(ctx, biz.apiKey, { name: 'Receptor Firmado' })
    const [got] = await eventually(async () => receiver.at(`/ok-${biz.id}`).length > 0 && receiver.at(`/ok-${biz.id}`), { what: 'the delivery' })
    const event = await eventOf(biz, 'lead.created', leadId)
    expect(got.headers['webhook-id']).toBe(event.id)
    expect(got.headers['webhook-timestamp']).toMatch(/^\d+$/)
    expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/)
    expect(got.headers['content-type']).toBe('application/json')
    // As an integrator's receiver: the raw body and the three headers, nothing of ours.
    const verified = new Webhook(secret).verify(got.body, got.headers) as any
    expect(verified).toEqual(event)
    expect(() => new Webhook(secret).verify(got.body.replace('Receptor', 'Impostor'), got.headers)).toThrow()
    // Only subscribed types: no lead.updated delivery after a PATCH.
    await call(ctx.app, 'PATCH', `/v1/leads/${leadId}`, { key: biz.apiKey, body: { rating: 5 } })
    const log = await call(ctx.app, 'GET', `/v1/webhook_endpoints/${id}/deliveries`, { key: biz.apiKey })
    expect(log.status, log.text).toBe(200)
    expect(log.body.data.map((a: any) => a.event_type)).toEqual(['lead.created'])
    expect(log.body.data[0]).toMatchObject({ event_id: event.id, attempt: 1, status_code: 200, error: null })
  })

  test('retries back off with the same webhook-id until a 2xx; every attempt is in the deliveries log', async () => {
    const biz = await seedBusiness(ctx)
    const path = `/flaky-${biz.id}`
    receiver.plans.set(path, [500, 503, 200])
    const { id, secret } = await createEndpoint(ctx, biz.apiKey, receiver.url(path), ['lead.*'])
    await createLead(ctx, biz.apiKey)
    await eventually(async () => (await deliveriesOfEndpoint(ctx, id))[0]?.state === 'delivered', { what: 'delivered after retries' })
    const got = receiver.at(path)
    expect(got.length).toBe(3)
    expect(new Set(got.map((g) => g.headers['webhook-id'])).size).toBe(1)
    for (const g of got) expect(() => new Webhook(secret).verify(g.body, g.headers)).not.toThrow()
    const log = await call(ctx.app, 'GET', `/v1/webhook_endpoints/${id}/deliveries`, { key: biz.apiKey })
    expect(log.body.data.map((a: any) => [a.attempt, a.status_code])).toEqual([
      [3, 200],
      [2, 503],
      [1, 500],
    ])
    expect(log.body.data[1].error).toContain('503')
    const endpoint = await call(ctx.app, 'GET', `/v1/webhook_endpoints/${id}`, { key: biz.apiKey })
    expect(endpoint.body.data).toMatchObject({ status: 'enabled', disabled_reason: null })
  })

  test('410 Gone disables the endpoint at once, with its reason', async () => {
    const biz = await seedBusiness(ctx)
    const path = `/gone-${biz.id}`
    receiver.plans.set(path, [410])
    const { id } = await createEndpoint(ctx, biz.apiKey, receiver.url(path))
    await createLead(ctx, biz.apiKey)
    const endpoint = await eventually(
      async () => {
        const r = await call(ctx.app, 'GET', `/v1/webhook_endpoints/${id}`, { key: biz.apiKey })
        return r.body.data.status === 'disabled' && r.body.data
      },
      { what: 'disabled' },
    )
    expect(endpoint.disabled_reason).toContain('410')
    expect(receiver.at(path).length).toBe(1)
    // No further deliveries to a disabled endpoint: once the relay has taken the second lead's
    // event (deliveries are made in the same transaction), the first is still the only one.
    await createLead(ctx, biz.apiKey)
    await eventually(
      async () =>
        (
          await ctx.deps.database.db.execute<{ n: number }>(sql`select count(*)::int as n from events where business_id = ${biz.id} and type = 'lead.created'`)
        )[0].n === 2,
      { what: 'the second lead.created relayed' },
    )
    const deliveries = await deliveriesOfEndpoint(ctx, id)
    expect(deliveries).toHaveLength(1)
    expect(deliveries.every((d) => d.state !== 'pending')).toBe(true)
  })

  test('an endpoint failing continuously for WEBHOOK_DISABLE_AFTER_MS accumulates attempts and is disabled with a reason', async () => {
    const biz = await seedBusiness(ctx)
    const path = `/down-${biz.id}`
    receiver.plans.set(path, [500])
    const { id } = await createEndpoint(ctx, biz.apiKey, receiver.url(path))
    await createLead(ctx, biz.apiKey)
    const endpoint = await eventually(
      async () => {
        const r = await call(ctx.app, 'GET', `/v1/webhook_endpoints/${id}`, { key: biz.apiKey })
        return r.body.data.status === 'disabled' && r.body.data
      },
      { what: 'disabled after the bound', timeoutMs: 15_000 },
    )
    expect(endpoint.disabled_reason).toContain('failing continuously')
    const attempts = receiver.at(path)
    expect(attempts.length).toBeGreaterThan(2)
    expect(attempts[attempts.length - 1].at - attempts[0].at).toBeGreaterThanOrEqual(DISABLE_AFTER_MS - 100)
    const [delivery] = await deliveriesOfEndpoint(ctx, id)
    expect(['failed', 'cancelled']).toContain(delivery.state)
  })

  test('a delivery first attempted long after it was created still retries until its failing endpoint is disabled', async () => {
    // As after an outage of the workers: the retry window counts from the first attempt, as the
    // endpoint's failing_since does, so the delivery cannot give up before the endpoint is disabled.
    const biz = await seedBusiness(ctx)
    const ok = `/up-${biz.id}`
    await createEndpoint(ctx, biz.apiKey, receiver.url(ok), ['lead.created'])
    const leadId = await createLead(ctx, biz.apiKey)
    await eventually(async () => receiver.at(ok).length > 0, { what: 'the event relayed' })
    const event = await eventOf(biz, 'lead.created', leadId)
    const down = `/late-${biz.id}`
    receiver.plans.set(down, [500])
    const { id } = await createEndpoint(ctx, biz.apiKey, receiver.url(down), ['lead.created'])
    await ctx.deps.database.db.execute(sql`
      insert into webhook_deliveries (business_id, endpoint_id, event_id, next_attempt_at, created_at)
      values (${biz.id}, ${id}, ${event.id}, now(), now() - interval '1 hour')`)
    const endpoint = await eventually(
      async () => {
        const r = await call(ctx.app, 'GET', `/v1/webhook_endpoints/${id}`, { key: biz.apiKey })
        return r.body.data.status === 'disabled' && r.body.data
      },
      {
        what: 'disabled after the bound',
        timeoutMs: 15_000,
        get detail() {
          return `${receiver.at(down).length} attempts`
        },
      },
    )
    expect(endpoint.disabled_reason).toContain('failing continuously')
    const attempts = receiver.at(down)
    expect(attempts[attempts.length - 1].at - attempts[0].at).toBeGreaterThanOrEqual(DISABLE_AFTER_MS - 100)
  })

  test('a redirect is a failed attempt and is not followed', async () => {
    const biz = await seedBusiness(ctx)
    const path = `/moved-${biz.id}`
    receiver.plans.set(path, [302, 200])
    const { id } = await createEndpoint(ctx, biz.apiKey, receiver.url(path))
    await createLead(ctx, biz.apiKey)
    await eventually(async () => (await deliveriesOfEndpoint(ctx, id))[0]?.state === 'delivered', { what: 'delivered on the retry' })
    expect(receiver.at('/redirected').length).toBe(0)
    const log = await call(ctx.app, 'GET', `/v1/webhook_endpoints/${id}/deliveries`, { key: biz.apiKey })
    expect(log.body.data[1]).toMatchObject({ attempt: 1, status_code: 302 })
    expect(log.body.data[1].error).toContain('redirect')
  })
})

describe('rotation and redelivery', () => {
  test('after rotate_secret every delivery carries two signatures, one per secret; each verifies alone', async () => {
    const biz = await seedBusiness(ctx)
    const path = `/rotate-${biz.id}`
    const { id, secret: oldSecret } = await createEndpoint(ctx, biz.apiKey, receiver.url(path))
    const rotated = await call(ctx.app, 'POST', `/v1/webhook_endpoints/${id}/rotate_secret`, { key: biz.apiKey })
    expect(rotated.status, rotated.text).toBe(200)
    const newSecret = rotated.body.secret as string
    expect(newSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
    expect(newSecret).not.toBe(oldSecret)
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23.9 * 3600_000)
    await createLead(ctx, biz.apiKey)
    const [got] = await eventually(async () => receiver.at(path).length > 0 && receiver.at(path), { what: 'the delivery' })
    expect(got.headers['webhook-signature'].split(' ').length).toBe(2)
    expect(() => new Webhook(newSecret).verify(got.body, got.headers)).not.toThrow()
    expect(() => new Webhook(oldSecret).verify(got.body, got.headers)).not.toThrow()
    // No secret in any listing.
    const listed = await call(ctx.app, 'GET', '/v1/webhook_endpoints', { key: biz.apiKey })
    expect(listed.text).not.toContain(newSecret.slice(6))
    expect(listed.text).not.toContain(oldSecret.slice(6))
  })

  test('redeliver is a further attempt of the same delivery: attempt numbers continue, same webhook-id', async () => {
    const biz = await seedBusiness(ctx)
    const path = `/again-${biz.id}`
    const { id } = await createEndpoint(ctx, biz.apiKey, receiver.url(path))
    const leadId = await createLead(ctx, biz.apiKey)
    await eventually(async () => (await deliveriesOfEndpoint(ctx, id))[0]?.state === 'delivered', { what: 'first delivery' })
    const event = await eventOf(biz, 'lead.created', leadId)
    const res = await call(ctx.app, 'POST', `/v1/events/${event.id}/redeliver`, { key: biz.apiKey, body: { endpoint_id: id } })
    expect(res.status, res.text).toBe(202)
    expect(res.body).toMatchObject({ status: 'ok', event_id: event.id, endpoint_id: id })
    await eventually(async () => receiver.at(path).length === 2, { what: 'the redelivery' })
    expect(receiver.at(path).map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id])
    await eventually(
      async () => {
        const log = await call(ctx.app, 'GET', `/v1/webhook_endpoints/${id}/deliveries`, { key: biz.apiKey })
        return log.body.data.length === 2 && log.body.data.map((a: any) => a.attempt).join() === '2,1'
      },
      { what: 'attempt 2 in the log' },
    )
    // An endpoint of another business, or a missing one: 404.
    const other = await seedBusiness(ctx)
    const foreign = await createEndpoint(ctx, other.apiKey, receiver.url('/foreign'))
    expect((await call(ctx.app, 'POST', `/v1/events/${event.id}/redeliver`, { key: biz.apiKey, body: { endpoint_id: foreign.id } })).status).toBe(404)
    expect((await call(ctx.app, 'POST', `/v1/events/${event.id}/redeliver`, { key: other.apiKey, body: { endpoint_id: foreign.id } })).status).toBe(404)
  })
})

describe('metrics', () => {
  test('/metrics counts attempts by outcome, their latency, and the oldest undelivered event per queue', async () => {
    const res = await call(ctx.app, 'GET', '/metrics')
    expect(res.status).toBe(200)
    const value = (line: string) =>
      Number(
        res.text
          .split('\n')
          .find((l) => l.startsWith(line))
          ?.split(' ')
          .pop(),
      )
    expect(value('webhook_delivery_attempts_total{outcome="delivered"}')).toBeGreaterThan(0)
    expect(value('webhook_delivery_attempts_total{outcome="retrying"}')).toBeGreaterThan(0)
    expect(value('webhook_delivery_duration_seconds_count')).toBeGreaterThan(0)
    expect(res.text).toContain('delivery_oldest_undelivered_event_age_seconds{queue="webhook-delivery"}')
    expect(res.text).toContain('delivery_oldest_undelivered_event_age_seconds{queue="outreach"}')
  })
})
