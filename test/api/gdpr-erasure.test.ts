/**
 * Data-subject rights (contract §13, §15): the export holds everything about the lead; after
 * DELETE /leads/{id} a search of every table and of Redis finds the person's name, email and
 * phone nowhere; `lead.deleted` is recorded; pending outreach and webhook deliveries are
 * cancelled; the same phone and email can be used again.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { randomInt } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { buildIngestLead } from '../../shared/leads/ingest'
import { createLogger } from '../../shared/platform/logger'
import { relayAll } from '../helpers/relay'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type TestContext } from '../helpers/context'
import { uniquePhone } from '../helpers/leads'
import { configureEndpoint } from '../helpers/outreach'
import { createEndpoint } from '../helpers/webhooks'

let ctx: TestContext
let workers: RunningWorkers
beforeAll(async () => {
  ctx = await createTestContext({ WEBHOOK_ALLOW_HOSTS: '127.0.0.1' })
  // Only the erasure clean-up runs: outreach and webhook deliveries stay pending, ingest jobs waiting.
  workers = await startWorkers(ctx.config, createLogger('silent'), ['lead-erasure'])
})
afterAll(async () => {
  await workers?.close(5000)
  await ctx?.close()
})

/** Every row of every table whose text contains `value` (case-insensitive): table → count. */
async function tablesHolding(value: string): Promise<Record<string, number>> {
  const db = ctx.deps.database.db
  const tables = await db.execute<{ table_name: string }>(
    sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
  )
  const found: Record<string, number> = {}
  for (const { table_name } of tables) {
    const [row] = await db.execute<{ n: number }>(sql`select count(*)::int as n from ${sql.identifier(table_name)} t where t::text ilike ${`%${value}%`}`)
    if (row.n) found[table_name] = row.n
  }
  return found
}

/** Every key of this test's queue prefix whose content contains `value`. */
async function redisKeysHolding(value: string): Promise<string[]> {
  const redis = ctx.deps.redis
  const keys = await redis.keys(`${ctx.config.queuePrefix}:*`)
  const hits: string[] = []
  for (const key of keys) {
    const type = await redis.type(key)
    let text = ''
    if (type === 'string') text = String(await redis.get(key))
    else if (type === 'hash') text = JSON.stringify(await redis.hgetall(key))
    else if (type === 'list') text = JSON.stringify(await redis.lrange(key, 0, -1))
    else if (type === 'set') text = JSON.stringify(await redis.smembers(key))
    else if (type === 'zset') text = JSON.stringify(await redis.zrange(key, '0', '-1'))
    else if (type === 'stream') text = JSON.stringify(await redis.xrange(key, '-', '+'))
    if (text.toLowerCase().includes(value.toLowerCase())) hits.push(`${key} (${type})`)
  }
  return hits
}

test('export holds everything; erasure leaves the person nowhere in PostgreSQL or Redis', async () => {
  const biz = await seedBusiness(ctx)
  const tag = randomInt(0, 1e9).toString(36)
  const name = `Zoe Borrable ${tag}`
  const email = `zoe.${tag}@borrable.example`
  const phone = uniquePhone()
  await configureEndpoint(ctx, biz.id, 'http://127.0.0.1:9/outreach')
  const hook = await createEndpoint(ctx, biz.apiKey, 'http://127.0.0.1:9/hook')

  const created = await call(ctx.app, 'POST', '/v1/leads', {
    key: biz.apiKey,
    body: { name, email, phone, notes: `Llamar a ${name}` },
    headers: { 'idempotency-key': `lead-${tag}` },
  })
  expect(created.status, created.text).toBe(201)
  const id = created.body.id as number
  await call(ctx.app, 'PATCH', `/v1/leads/${id}`, { key: biz.apiKey, body: { name: `${name} Segunda`, rating: 4 } })
  const inquiry = await call(ctx.app, 'POST', '/v1/leads/inquiries', {
    key: biz.apiKey,
    headers: { 'idempotency-key': `inq-${tag}` },
    body: { contact: { name, email, phone }, message: `Soy ${name}, llamadme al ${phone}` },
  })
  expect(inquiry.body).toMatchObject({ lead_id: id, lead_created: false, outreach: 'queued' })
  // A rental-ingest lead of the same person still waiting in Redis (no ingest worker here).
  await ctx.deps.queues.enqueue('lead-ingest', {
    leads: [buildIngestLead(biz.id, { source: 'landing', sourcePage: 'https://example.com/', contact: { name, phone }, search: {} })],
  })
  // Webhook deliveries of the person's events, pending (the endpoint has no receiver).
  await relayAll(ctx.deps)

  const exported = await call(ctx.app, 'GET', `/v1/leads/${id}/export`, { key: biz.apiKey })
  expect(exported.status, exported.text).toBe(200)
  const data = exported.body.data
  expect(data.lead).toMatchObject({ id, name: `${name} Segunda`, email, phone })
  expect(data.inquiries).toHaveLength(1)
  expect(data.inquiries[0]).toMatchObject({ id: inquiry.body.inquiry_id, lead_id: id, outreach: 'queued', contact: { name, email, phone } })
  expect(data.outreach_deliveries).toEqual([expect.objectContaining({ inquiry_id: inquiry.body.inquiry_id, state: 'pending', attempts: 0 })])
  expect(data.events.map((e: any) => e.type)).toEqual(['lead.created', 'lead.updated', 'inquiry.created'])
  expect(exported.body.authenticated_as).toBe(biz.name)

  for (const value of [name, email, phone]) expect(Object.keys(await tablesHolding(value)).length, value).toBeGreaterThan(0)
  expect((await redisKeysHolding(phone)).length).toBeGreaterThan(0)

  const erased = await call(ctx.app, 'DELETE', `/v1/leads/${id}`, { key: biz.apiKey })
  expect(erased.status, erased.text).toBe(200)
  expect(erased.body).toEqual({ status: 'ok', id })
  expect((await call(ctx.app, 'GET', `/v1/leads/${id}`, { key: biz.apiKey })).status).toBe(404)
  expect((await call(ctx.app, 'GET', `/v1/leads/${id}/export`, { key: biz.apiKey })).status).toBe(404)
  expect((await call(ctx.app, 'DELETE', `/v1/leads/${id}`, { key: biz.apiKey })).status).toBe(404)

  await relayAll(ctx.deps)
  const events = (await call(ctx.app, 'GET', '/v1/events?types=lead.*,inquiry.*', { key: biz.apiKey })).body.data as any[]
  expect(events.map((e) => [e.type, e.data])).toEqual([
    ['lead.created', { object: { id } }],
    ['lead.updated', { object: { id } }],
    ['inquiry.created', { object: { id: inquiry.body.inquiry_id } }],
    ['lead.deleted', { object: { id } }],
  ])
  const states = await ctx.deps.database.db.execute<{ state: string }>(
    sql`select state from webhook_deliveries where endpoint_id = ${hook.id} and event_id = any(${sql.raw(
      `array[${events
        .slice(0, 3)
        .map((e) => `'${e.id}'`)
        .join(',')}]`,
    )})`,
  )
  expect([...states].map((s) => s.state)).toEqual(['cancelled', 'cancelled', 'cancelled'])

  // The Redis side is a queued clean-up: wait for it, then search everything.
  await eventually(async () => (await redisKeysHolding(phone)).length === 0, { what: 'the ingest job to lose the person', timeoutMs: 15_000 })
  for (const value of [name, email, phone, phone.slice(1), email.split('@')[0]]) {
    expect(await tablesHolding(value), value).toEqual({})
    expect(await redisKeysHolding(value), value).toEqual([])
  }

  // The same phone and email may be created again.
  const again = await call(ctx.app, 'POST', '/v1/leads', { key: biz.apiKey, body: { name: 'Otra persona', email, phone } })
  expect(again.status, again.text).toBe(201)
}, 30_000)

test('erasing a lead of another business, or a missing one, is a 404 and erases nothing', async () => {
  const [a, b] = [await seedBusiness(ctx), await seedBusiness(ctx)]
  const id = (await call(ctx.app, 'POST', '/v1/leads', { key: a.apiKey, body: { name: 'Ajena', phone: uniquePhone() } })).body.id
  expect((await call(ctx.app, 'DELETE', `/v1/leads/${id}`, { key: b.apiKey })).status).toBe(404)
  expect((await call(ctx.app, 'GET', `/v1/leads/${id}/export`, { key: b.apiKey })).status).toBe(404)
  expect((await call(ctx.app, 'GET', `/v1/leads/${id}`, { key: a.apiKey })).status).toBe(200)
  const readOnly = (await a.key(['leads:read'])).apiKey
  expect((await call(ctx.app, 'DELETE', `/v1/leads/${id}`, { key: readOnly })).status).toBe(403)
  expect((await call(ctx.app, 'GET', `/v1/leads/${id}/export`, { key: readOnly })).status).toBe(200)
})

test('a lead erased before the relay took its events: the outbox keeps only ids, and so do the events relayed after', async () => {
  const biz = await seedBusiness(ctx)
  const tag = randomInt(0, 1e9).toString(36)
  const name = `Nadia Pendiente ${tag}`
  const email = `nadia.${tag}@borrable.example`
  const phone = uniquePhone()
  await relayAll(ctx.deps)
  const id = (await call(ctx.app, 'POST', '/v1/leads', { key: biz.apiKey, body: { name, email, phone } })).body.id as number
  await call(ctx.app, 'PATCH', `/v1/leads/${id}`, { key: biz.apiKey, body: { notes: `Escribir a ${email}` } })
  const inquiry = await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: biz.apiKey, body: { contact: { name, email, phone }, message: `Soy ${name}` } })
  const outbox = async () => [
    ...(await ctx.deps.database.db.execute<{ type: string; data: unknown; contact: unknown }>(
      sql`select type, data, contact from event_outbox where business_id = ${biz.id} order by n`,
    )),
  ]
  expect((await outbox()).map((r) => r.type)).toEqual(['lead.created', 'lead.updated', 'inquiry.created'])

  expect((await call(ctx.app, 'DELETE', `/v1/leads/${id}`, { key: biz.apiKey })).status).toBe(200)
  expect(await outbox()).toEqual([
    { type: 'lead.created', data: { object: { id } }, contact: null },
    { type: 'lead.updated', data: { object: { id } }, contact: null },
    { type: 'inquiry.created', data: { object: { id: inquiry.body.inquiry_id } }, contact: null },
    { type: 'lead.deleted', data: { object: { id } }, contact: null },
  ])
  for (const value of [name, email, phone]) expect(await tablesHolding(value), value).toEqual({})

  await relayAll(ctx.deps)
  const events = (await call(ctx.app, 'GET', '/v1/events', { key: biz.apiKey })).body.data as any[]
  expect(events.map((e) => [e.type, e.data])).toEqual([
    ['lead.created', { object: { id } }],
    ['lead.updated', { object: { id } }],
    ['inquiry.created', { object: { id: inquiry.body.inquiry_id } }],
    ['lead.deleted', { object: { id } }],
  ])
})
