import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createLead, leadBody, uniquePhone } from '../helpers/leads'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const get = (id: number, key = biz.apiKey) => call(ctx.app, 'GET', `/v1/leads/${id}`, { key })
const patch = (id: number, body: unknown, key = biz.apiKey) => call(ctx.app, 'PATCH', `/v1/leads/${id}`, { key, body })

describe('POST /leads + GET /leads/{id} (contract §4)', () => {
  test('creates a contact and returns the lead object with every field', async () => {
    const body = leadBody({
      phone: '600 111 222'.replace('111', String(100 + Math.floor(Math.random() * 800))),
      email: `Ana.${Date.now()}@Example.com`,
      source: 'web',
      operation: 'venta',
      property_types: ['casa', 'apartamento'],
      rating: 4,
      urgency: 'media-urgencia',
      budget_max: 250000,
      min_bedrooms: 3,
      search_location: { name: 'Valencia' },
      notes: 'Llamar por la tarde',
    })
    const res = await call(ctx.app, 'POST', '/v1/leads', { key: biz.apiKey, body })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toEqual({ status: 'ok', id: expect.any(Number) })
    const got = await get(res.body.id)
    expect(got.status, got.text).toBe(200)
    expect(got.body).toEqual({
      status: 'ok',
      authenticated_as: biz.name,
      data: {
        id: res.body.id,
        type: 'demandante',
        name: body.name,
        email: body.email,
        phone: `+34${body.phone.replace(/\s/g, '')}`,
        source: 'web',
        operation: 'venta',
        property_types: ['casa', 'apartamento'],
        rating: 4,
        urgency: 'media-urgencia',
        budget_max: 250000,
        min_bedrooms: 3,
        search_location: { name: 'Valencia' },
        notes: 'Llamar por la tarde',
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    })
    expect(new Date(got.body.data.created_at).toISOString()).toBe(got.body.data.created_at)
    expect(got.headers.get('cache-control')).toBe('no-store')
  })

  test('only a name is required; the rest take their defaults', async () => {
    const res = await call(ctx.app, 'POST', '/v1/leads', { key: biz.apiKey, body: { name: 'Solo nombre' } })
    expect(res.status, res.text).toBe(201)
    const { data } = (await get(res.body.id)).body
    expect(data).toMatchObject({
      type: 'demandante',
      name: 'Solo nombre',
      email: null,
      phone: null,
      source: null,
      operation: null,
      property_types: [],
      rating: null,
      urgency: null,
      budget_max: null,
      min_bedrooms: null,
      search_location: null,
      notes: '',
    })
  })

  test('an owner contact can be created with type propietario', async () => {
    const id = await createLead(ctx, biz.apiKey, { type: 'propietario' })
    expect((await get(id)).body.data.type).toBe('propietario')
  })

  test('a missing or foreign lead is 404 Lead not found', async () => {
    const other = await seedBusiness(ctx)
    const foreign = await createLead(ctx, other.apiKey)
    for (const id of [foreign, 2147483000]) {
      const res = await get(id)
      expect(res.status, res.text).toBe(404)
      expect(res.headers.get('content-type')).toContain('application/problem+json')
      expect(res.body.detail).toBe('Lead not found')
    }
    const res = await patch(foreign, { name: 'x' })
    expect(res.status).toBe(404)
    expect(res.body.detail).toBe('Lead not found')
    expect((await get(foreign, other.apiKey)).body.data.name).toBe('Lucía Martín')
  })

  test('a path id that is not an integer ≥ 1 is 422', async () => {
    for (const id of ['0', 'abc', '-3']) {
      const res = await call(ctx.app, 'GET', `/v1/leads/${id}`, { key: biz.apiKey })
      expect(res.status, res.text).toBe(422)
      expect(res.body.errors[0].loc).toEqual(['path', 'lead_id'])
    }
  })
})

describe('PATCH /leads/{id} (contract §4)', () => {
  test('changes only the supplied fields, null clears, updated_at moves', async () => {
    const id = await createLead(ctx, biz.apiKey, { source: 'web', rating: 2, notes: 'primera nota', budget_max: 900 })
    const before = (await get(id)).body.data
    const res = await patch(id, { rating: 5, source: null, phone: '+34 611 22 33 44'.replace('22', String(10 + Math.floor(Math.random() * 89))) })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ status: 'ok', id })
    const after = (await get(id)).body.data
    expect(after).toEqual({ ...before, rating: 5, source: null, phone: expect.stringMatching(/^\+34611\d{6}$/), updated_at: expect.any(String) })
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(before.updated_at))
    expect(after.created_at).toBe(before.created_at)
  })

  test('name, type, property_types and notes cannot be null; unknown fields are refused', async () => {
    const id = await createLead(ctx, biz.apiKey)
    for (const body of [{ name: null }, { type: null }, { property_types: null }, { notes: null }, { nmae: 'x' }, { rating: 6 }]) {
      const res = await patch(id, body)
      expect(res.status, `${JSON.stringify(body)} ${res.text}`).toBe(422)
      expect(res.body.errors[0].loc[0]).toBe('body')
    }
  })

  test('setting a lead’s own phone or email again is not a duplicate', async () => {
    const body = leadBody()
    const id = await createLead(ctx, biz.apiKey, body)
    const res = await patch(id, { phone: body.phone, email: body.email.toUpperCase() })
    expect(res.status, res.text).toBe(200)
  })
})

describe('scopes (api-spec §5)', () => {
  test('leads:read reads, leads:write writes, and each alone is 403 for the other', async () => {
    const reader = await biz.key(['leads:read'])
    const writer = await biz.key(['leads:write'])
    const ingester = await biz.key(['leads:ingest'])
    const id = await createLead(ctx, writer.apiKey)
    expect((await get(id, reader.apiKey)).status).toBe(200)
    expect((await call(ctx.app, 'GET', '/v1/leads', { key: reader.apiKey })).status).toBe(200)
    for (const key of [writer.apiKey, ingester.apiKey]) {
      expect((await get(id, key)).status).toBe(403)
      expect((await call(ctx.app, 'GET', '/v1/leads', { key })).status).toBe(403)
    }
    for (const key of [reader.apiKey, ingester.apiKey]) {
      const created = await call(ctx.app, 'POST', '/v1/leads', { key, body: leadBody() })
      expect(created.status, created.text).toBe(403)
      expect(created.headers.get('content-type')).toContain('application/problem+json')
      expect((await patch(id, { name: 'x' }, key)).status).toBe(403)
    }
    // 403 is decided before validation.
    expect((await call(ctx.app, 'POST', '/v1/leads', { key: reader.apiKey, body: { bad: true } })).status).toBe(403)
  })

  test('no key is 401', async () => {
    expect((await call(ctx.app, 'GET', '/v1/leads', {})).status).toBe(401)
    expect((await call(ctx.app, 'POST', '/v1/leads', { body: { name: 'x', phone: uniquePhone() } })).status).toBe(401)
  })
})
