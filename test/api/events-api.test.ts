/**
 * GET /events and GET /events/{id} (contract §10.1, §15), and the property events recorded by
 * the listing routes: `types` with families, `after`/`limit`/`has_more`/`next_after`, visibility
 * by scope, 404 whatever the id's shape, and the 30-day sweep.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { sweepOldEvents } from '../../shared/events/operations'
import { relayAll } from '../helpers/relay'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createLead } from '../helpers/leads'
import { propertyBody } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

/** Sequences are given by the relay after commit; no worker runs here, so the test relays. */
const list = async (key: string, query = '') => {
  await relayAll(ctx.deps)
  return call(ctx.app, 'GET', `/v1/events${query}`, { key })
}

describe('property events', () => {
  test('create, PATCH, publish and unpublish record their events; repeats that change nothing record none', async () => {
    const b = await seedBusiness(ctx)
    const body = propertyBody()
    const created = await call(ctx.app, 'POST', '/v1/properties', { key: b.apiKey, body })
    expect(created.status, created.text).toBe(201)
    const id = created.body.id
    expect((await call(ctx.app, 'PATCH', `/v1/properties/${id}`, { key: b.apiKey, body: { title: 'Otro título' } })).status).toBe(200)
    expect((await call(ctx.app, 'PATCH', `/v1/properties/${id}`, { key: b.apiKey, body: { title: 'Otro título' } })).status).toBe(200)
    expect((await call(ctx.app, 'POST', `/v1/properties/${id}/publish`, { key: b.apiKey })).status).toBe(200)
    expect((await call(ctx.app, 'POST', `/v1/properties/${id}/publish`, { key: b.apiKey })).status).toBe(200)
    expect((await call(ctx.app, 'POST', `/v1/properties/${id}/unpublish`, { key: b.apiKey })).status).toBe(200)
    expect((await call(ctx.app, 'POST', `/v1/properties/${id}/unpublish`, { key: b.apiKey })).status).toBe(200)
    const events = (await list(b.apiKey, '?types=property.*')).body.data as any[]
    expect(events.map((e) => e.type)).toEqual(['property.created', 'property.updated', 'property.published', 'property.unpublished'])
    expect(events[0].data.object).toEqual({ id, published: false, ...body })
    expect(events[1].data.object).toEqual({ id, published: false, title: 'Otro título' })
    expect(events[3].data.object).toEqual({ id })
  })

  test('property.published carries the public Property as GET /properties/{id} shows it', async () => {
    const b = await seedBusiness(ctx)
    const id = (await call(ctx.app, 'POST', '/v1/properties', { key: b.apiKey, body: propertyBody() })).body.id
    await call(ctx.app, 'POST', `/v1/properties/${id}/publish`, { key: b.apiKey })
    const shown = await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: b.apiKey })
    const published = ((await list(b.apiKey, '?types=property.published')).body.data as any[])[0]
    expect(published.data.object).toEqual(shown.body.data)
  })
})

describe('GET /events', () => {
  test('pages ascending by sequence with has_more and next_after; types filter by type and family', async () => {
    const b = await seedBusiness(ctx)
    for (let i = 0; i < 5; i++) await createLead(ctx, b.apiKey)
    await call(ctx.app, 'POST', '/v1/properties', { key: b.apiKey, body: propertyBody() })
    const first = await list(b.apiKey, '?limit=2')
    expect(first.status, first.text).toBe(200)
    expect(first.body).toMatchObject({ status: 'ok', has_more: true, next_after: 2, authenticated_as: b.name })
    expect(first.body.data.map((e: any) => e.sequence)).toEqual([1, 2])
    const rest = await list(b.apiKey, `?after=${first.body.next_after}&limit=100`)
    expect(rest.body.data.map((e: any) => e.sequence)).toEqual([3, 4, 5, 6])
    expect(rest.body).toMatchObject({ has_more: false, next_after: 6 })
    // The list is written by PostgreSQL, the single event by the API: the same representation.
    for (const event of [...first.body.data, ...rest.body.data]) {
      expect(event.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      expect((await call(ctx.app, 'GET', `/v1/events/${event.id}`, { key: b.apiKey })).body.data).toEqual(event)
    }
    const empty = await list(b.apiKey, '?after=6')
    expect(empty.body).toMatchObject({ data: [], has_more: false, next_after: 6 })
    expect((await list(b.apiKey, '?types=property.created')).body.data.map((e: any) => e.type)).toEqual(['property.created'])
    expect((await list(b.apiKey, '?types=lead.*,property.created')).body.data.length).toBe(6)
    expect((await list(b.apiKey, '?types=inquiry.*')).body.data).toEqual([])
    const bad = await list(b.apiKey, '?types=lead.created,lead.exploded')
    expect(bad.status).toBe(422)
    expect(bad.body.errors[0].loc).toEqual(['query', 'types'])
    for (const q of ['?limit=0', '?limit=1001', '?after=-1', '?after=x']) expect((await list(b.apiKey, q)).status, q).toBe(422)
  })

  test("a key sees only the events its scopes can read; other businesses' events are absent", async () => {
    const b = await seedBusiness(ctx)
    await createLead(ctx, b.apiKey)
    await call(ctx.app, 'POST', '/v1/properties', { key: b.apiKey, body: propertyBody() })
    const leadsOnly = (await b.key(['leads:read'])).apiKey
    const propsOnly = (await b.key(['properties:read', 'properties:write'])).apiKey
    const propsRead = (await b.key(['properties:read'])).apiKey
    const neither = (await b.key(['leads:ingest'])).apiKey
    expect((await list(leadsOnly)).body.data.map((e: any) => e.type)).toEqual(['lead.created'])
    expect((await list(propsOnly)).body.data.map((e: any) => e.type)).toEqual(['property.created'])
    // property.created carries the draft's private fields: properties:write too (contract §15).
    expect((await list(propsRead)).body.data).toEqual([])
    expect((await list(propsOnly, '?types=lead.*')).body.data).toEqual([])
    expect((await list(neither)).body).toMatchObject({ status: 'ok', data: [], has_more: false })
    const leadEvent = (await list(leadsOnly)).body.data[0]
    expect((await call(ctx.app, 'GET', `/v1/events/${leadEvent.id}`, { key: leadsOnly })).body.data).toEqual(leadEvent)
    expect((await call(ctx.app, 'GET', `/v1/events/${leadEvent.id}`, { key: propsOnly })).status).toBe(404)
    const other = await seedBusiness(ctx)
    expect((await call(ctx.app, 'GET', `/v1/events/${leadEvent.id}`, { key: other.apiKey })).status).toBe(404)
    expect((await list(other.apiKey)).body.data).toEqual([])
  })

  test('GET /events/{id}: any id that names no visible event is a 404, whatever its shape', async () => {
    for (const id of ['evt_doesnotexist', 'nope', '1', '%20', 'evt_' + 'x'.repeat(300), "evt_' or 1=1 --"]) {
      const res = await call(ctx.app, 'GET', `/v1/events/${encodeURIComponent(id)}`, { key: biz.apiKey })
      expect(res.status, id).toBe(404)
      expect(res.headers.get('content-type')).toContain('application/problem+json')
    }
  })
})

describe('retention', () => {
  test('the sweep deletes events older than 30 days, in batches, and keeps the rest', async () => {
    const b = await seedBusiness(ctx)
    for (let i = 0; i < 3; i++) await createLead(ctx, b.apiKey)
    await relayAll(ctx.deps)
    const db = ctx.deps.database.db
    await db.execute(sql`update events set created_at = now() - interval '31 days' where business_id = ${b.id} and sequence <= 2`)
    await sweepOldEvents(ctx.deps, { batch: 1 })
    const left = await db.execute<{ sequence: string }>(sql`select sequence from events where business_id = ${b.id}`)
    expect([...left].map((r) => Number(r.sequence))).toEqual([3])
  })
})
