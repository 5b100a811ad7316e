/**
 * Events are recorded in the transaction of their change (contract §10.1): each change an
 * integrator can observe has its event, with the resource as it is after the change, and the
 * per-business sequence increases strictly in commit order.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { buildIngestLead } from '../../shared/leads/ingest'
import { storeIngestBatch } from '../../shared/leads/operations'
import { relayAll } from '../helpers/relay'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createLead, leadBody, uniquePhone } from '../helpers/leads'
import { inquiryBody } from '../helpers/outreach'

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

interface StoredEvent {
  id: string
  type: string
  sequence: number
  data: { object: Record<string, any>; previous_attributes?: Record<string, unknown> }
}

/** Sequences are given by the relay after commit (docs/events.md); tests without a worker relay here. */
async function eventsOf(businessId: number): Promise<StoredEvent[]> {
  await relayAll(ctx.deps)
  const rows = await ctx.deps.database.db.execute<{ id: string; type: string; sequence: string; data: StoredEvent['data'] }>(
    sql`select id, type, sequence, data from events where business_id = ${businessId} order by sequence`,
  )
  return [...rows].map((r) => ({ ...r, sequence: Number(r.sequence) }))
}

/** The stored JSON text of an event's `data`, as GET /events serves it. */
async function storedDataText(eventId: string): Promise<string> {
  const [row] = await ctx.deps.database.db.execute<{ data: string }>(sql`select data::text as data from events where id = ${eventId}`)
  return row.data
}

describe('lead events', () => {
  let biz: SeededBusiness
  beforeAll(async () => {
    biz = await seedBusiness(ctx)
  })

  test('POST /leads records lead.created with the lead as GET /leads/{id} shows it', async () => {
    const id = await createLead(ctx, biz.apiKey, { name: 'Ana Evento' })
    const events = (await eventsOf(biz.id)).filter((e) => e.data.object.id === id)
    expect(events.map((e) => e.type)).toEqual(['lead.created'])
    expect(events[0].id).toMatch(/^evt_[0-9a-f]{11}[A-Za-z0-9]{15}$/)
    const shown = await call(ctx.app, 'GET', `/v1/leads/${id}`, { key: biz.apiKey })
    expect(events[0].data.object).toEqual(shown.body.data)
  })

  test('lead.created is built with the insert: every field, defaults and odd values read as GET /leads/{id} shows them', async () => {
    const bodies = [
      { name: 'Solo Nombre' },
      {
        name: '  Émile Ñúñez 🏠  ',
        type: 'propietario',
        email: `MiXeD.${Date.now()}@Example.com`,
        source: 'portal "x"\n',
        operation: 'traspaso',
        property_types: ['local', 'apartamento'],
        rating: 5,
        urgency: 'alta-urgencia',
        budget_max: 1234.56,
        min_bedrooms: 0,
        search_location: { zeta: [1, 2.5, { b: null, a: 'ü' }], a: true, name: 'Ruzafa', long_key_name: { nested: {} } },
        notes: 'línea 1\nlínea 2 \u2028 <&>',
      },
    ]
    for (const body of bodies) {
      const id = await createLead(ctx, biz.apiKey, body)
      const [event] = (await eventsOf(biz.id)).filter((e) => e.data.object.id === id)
      const shown = await call(ctx.app, 'GET', `/v1/leads/${id}`, { key: biz.apiKey })
      expect(event.data.object).toEqual(shown.body.data)
      expect(event.data.object.created_at).toBe(shown.body.data.created_at)
      // The lead's fields in the order GET /leads/{id} answers them (not jsonb's order).
      expect(Object.keys(JSON.parse(await storedDataText(event.id)).object)).toEqual(Object.keys(shown.body.data))
    }
  })

  test('a refused create (409) records nothing', async () => {
    const body = leadBody()
    await createLead(ctx, biz.apiKey, body)
    const before = (await eventsOf(biz.id)).length
    const dup = await call(ctx.app, 'POST', '/v1/leads', { key: biz.apiKey, body: { ...body, email: null } })
    expect(dup.status).toBe(409)
    expect((await eventsOf(biz.id)).length).toBe(before)
  })

  test('PATCH records lead.updated with previous_attributes of the changed fields; a PATCH that changes nothing records nothing', async () => {
    const id = await createLead(ctx, biz.apiKey, { name: 'Before', rating: 2 })
    expect((await call(ctx.app, 'PATCH', `/v1/leads/${id}`, { key: biz.apiKey, body: { name: 'After', rating: 2 } })).status).toBe(200)
    expect((await call(ctx.app, 'PATCH', `/v1/leads/${id}`, { key: biz.apiKey, body: { rating: 2 } })).status).toBe(200)
    const updates = (await eventsOf(biz.id)).filter((e) => e.data.object.id === id && e.type === 'lead.updated')
    expect(updates.length).toBe(1)
    expect(updates[0].data.object.name).toBe('After')
    expect(updates[0].data.previous_attributes).toEqual({ name: 'Before' })
  })

  test('stored ingest leads record lead.created each, duplicates none', async () => {
    const b = await seedBusiness(ctx)
    const phone = uniquePhone()
    const lead = (name: string, p = uniquePhone()) =>
      buildIngestLead(b.id, { source: 'landing', sourcePage: 'https://example.com/', contact: { name, phone: p }, search: {} })
    await storeIngestBatch(ctx.deps, [lead('uno', phone), lead('dos'), lead('tres', phone)])
    await storeIngestBatch(ctx.deps, [lead('cuatro', phone)])
    const events = await eventsOf(b.id)
    expect(events.map((e) => e.data.object.name).sort()).toEqual(['dos', 'uno'])
    expect(events.every((e) => e.type === 'lead.created')).toBe(true)
    for (const e of events) {
      const shown = await call(ctx.app, 'GET', `/v1/leads/${e.data.object.id}`, { key: b.apiKey })
      expect(Object.keys(JSON.parse(await storedDataText(e.id)).object)).toEqual(Object.keys(shown.body.data))
    }
  })

  test('an inquiry that creates its lead records lead.created then inquiry.created', async () => {
    const b = await seedBusiness(ctx)
    const res = await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: b.apiKey, body: inquiryBody() })
    expect(res.status, res.text).toBe(200)
    const events = await eventsOf(b.id)
    expect(events.map((e) => e.type)).toEqual(['lead.created', 'inquiry.created'])
    expect(events[1].data.object).toMatchObject({ id: res.body.inquiry_id, inquiry_id: res.body.inquiry_id, lead_id: res.body.lead_id, lead_created: true })
  })
})

describe('sequence', () => {
  test('strictly increasing from 1 without gaps within a business, under 40 concurrent creates', async () => {
    const b = await seedBusiness(ctx)
    const results = await Promise.all(Array.from({ length: 40 }, () => call(ctx.app, 'POST', '/v1/leads', { key: b.apiKey, body: leadBody() })))
    expect(results.every((r) => r.status === 201)).toBe(true)
    const events = await eventsOf(b.id)
    expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1))
    // Commit order: a lead created later (higher id, assigned in insert order) can still commit first,
    // but every sequence is unique and each lead has exactly one event.
    expect(new Set(events.map((e) => e.data.object.id)).size).toBe(40)
  })

  test('each business counts on its own', async () => {
    const [a, b] = [await seedBusiness(ctx), await seedBusiness(ctx)]
    await createLead(ctx, a.apiKey)
    await createLead(ctx, b.apiKey)
    await createLead(ctx, a.apiKey)
    expect((await eventsOf(a.id)).map((e) => e.sequence)).toEqual([1, 2])
    expect((await eventsOf(b.id)).map((e) => e.sequence)).toEqual([1])
  })
})
