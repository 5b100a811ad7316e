import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { INVALID_PHONE_MESSAGE } from '../../shared/leads/phones'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { contactsOf, createLead, leadBody, uniquePhone } from '../helpers/leads'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const post = (body: unknown, key = biz.apiKey, headers: Record<string, string> = {}) => call(ctx.app, 'POST', '/v1/leads', { key, body, headers })

describe('lead input rules (contract §4, §6)', () => {
  test('phones are stored in E.164; numbers without a prefix are Spanish; 00 is +', async () => {
    const b = await seedBusiness(ctx)
    for (const [input, stored] of [
      ['612 34 56 78', '+34612345678'],
      ['0034 613 345 678', '+34613345678'],
      ['+33 6 12 34 56 78', '+33612345678'],
    ]) {
      const res = await post({ name: 'x', phone: input }, b.apiKey)
      expect(res.status, res.text).toBe(201)
      const rows = await contactsOf(ctx, b.id)
      expect(rows.find((r) => r.id === res.body.id).phone).toBe(stored)
    }
  })

  test('an invalid phone is 422 at body.phone with the documented message', async () => {
    for (const phone of ['123', 'not a phone', '+34 000']) {
      const res = await post(leadBody({ phone }))
      expect(res.status, res.text).toBe(422)
      expect(res.headers.get('content-type')).toContain('application/problem+json')
      expect(res.body.errors).toEqual([{ loc: ['body', 'phone'], msg: INVALID_PHONE_MESSAGE, type: 'phone_invalid' }])
      expect(res.body.detail).toBe(INVALID_PHONE_MESSAGE)
    }
  })

  test('schema violations are 422 naming each field', async () => {
    const cases: [unknown, (string | number)[]][] = [
      [{}, ['body', 'name']],
      [{ name: '' }, ['body', 'name']],
      [{ name: 'x'.repeat(201) }, ['body', 'name']],
      [{ name: '   ' }, ['body', 'name']],
      [{ name: 'x', email: 'not-an-email' }, ['body', 'email']],
      [{ name: 'x', type: 'cliente' }, ['body', 'type']],
      [{ name: 'x', operation: 'compra' }, ['body', 'operation']],
      [{ name: 'x', property_types: ['castillo'] }, ['body', 'property_types', 0]],
      [{ name: 'x', rating: 0 }, ['body', 'rating']],
      [{ name: 'x', rating: 2.5 }, ['body', 'rating']],
      [{ name: 'x', urgency: 'urgente' }, ['body', 'urgency']],
      [{ name: 'x', budget_max: -1 }, ['body', 'budget_max']],
      [{ name: 'x', min_bedrooms: -1 }, ['body', 'min_bedrooms']],
      [{ name: 'x', search_location: 'Valencia' }, ['body', 'search_location']],
      [{ name: 'x', id: 5 }, ['body', 'id']],
      [{ name: 'x', created_at: '2026-01-01T00:00:00Z' }, ['body', 'created_at']],
    ]
    for (const [body, loc] of cases) {
      const res = await post(body)
      expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(422)
      expect(
        res.body.errors.map((e: any) => e.loc),
        JSON.stringify(body),
      ).toContainEqual(loc)
    }
  })

  test('malformed JSON and a non-JSON content type are 422', async () => {
    expect((await post('{"name":')).status).toBe(422)
    const res = await call(ctx.app, 'POST', '/v1/leads', { key: biz.apiKey, body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(res.status).toBe(422)
  })
})

describe('409 Duplicate contact (contract §4, §6)', () => {
  test('the same phone (any spelling) is 409 with existing_id, and nothing is created', async () => {
    const b = await seedBusiness(ctx)
    const phone = uniquePhone()
    const id = await createLead(ctx, b.apiKey, { phone })
    const national = phone.slice(3).replace(/(\d{3})(\d{3})(\d{3})/, '$1 $2 $3')
    const res = await post(leadBody({ phone: national }), b.apiKey)
    expect(res.status, res.text).toBe(409)
    expect(res.headers.get('content-type')).toContain('application/problem+json')
    expect(res.body).toMatchObject({ status: 409, detail: 'Duplicate contact', existing_id: id, code: 'duplicate_contact' })
    expect(await contactsOf(ctx, b.id)).toHaveLength(1)
  })

  test('the same email in another case is 409 with existing_id', async () => {
    const b = await seedBusiness(ctx)
    const id = await createLead(ctx, b.apiKey, { email: 'Pedro.Ruiz@Example.com' })
    const res = await post(leadBody({ email: 'pedro.ruiz@EXAMPLE.com' }), b.apiKey)
    expect(res.status, res.text).toBe(409)
    expect(res.body.existing_id).toBe(id)
  })

  test('PATCH to another lead’s phone or email is 409 naming that lead, and changes nothing', async () => {
    const b = await seedBusiness(ctx)
    const first = leadBody()
    const a = await createLead(ctx, b.apiKey, first)
    const other = await createLead(ctx, b.apiKey)
    for (const body of [{ phone: first.phone, name: 'cambiado' }, { email: first.email.toUpperCase() }]) {
      const res = await call(ctx.app, 'PATCH', `/v1/leads/${other}`, { key: b.apiKey, body })
      expect(res.status, res.text).toBe(409)
      expect(res.body.existing_id).toBe(a)
    }
    const row = (await contactsOf(ctx, b.id)).find((r) => r.id === other)
    expect(row.name).toBe('Lucía Martín')
  })

  test('the same phone in another business is not a duplicate', async () => {
    const phone = uniquePhone()
    const b1 = await seedBusiness(ctx)
    const b2 = await seedBusiness(ctx)
    await createLead(ctx, b1.apiKey, { phone })
    expect((await post(leadBody({ phone }), b2.apiKey)).status).toBe(201)
  })

  test('20 concurrent creates of one phone: one 201, the rest 409 naming it', async () => {
    const b = await seedBusiness(ctx)
    const phone = uniquePhone()
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => post({ name: `n${i}`, phone }, b.apiKey)))
    const createdIds = results.filter((r) => r.status === 201).map((r) => r.body.id)
    expect(createdIds).toHaveLength(1)
    for (const r of results.filter((r) => r.status !== 201)) {
      expect(r.status, r.text).toBe(409)
      expect(r.body.existing_id).toBe(createdIds[0])
    }
    expect(await contactsOf(ctx, b.id)).toHaveLength(1)
  })
})

describe('Idempotency-Key on POST /leads (api-spec §8)', () => {
  const create = (key: string, idem: string, body: unknown) => post(body, key, { 'idempotency-key': idem })

  test('a replay returns the original answer with Idempotent-Replayed and creates nothing', async () => {
    const b = await seedBusiness(ctx)
    const body = leadBody()
    const first = await create(b.apiKey, 'lead-1', body)
    expect(first.status, first.text).toBe(201)
    const again = await create(b.apiKey, 'lead-1', body)
    expect(again.status, again.text).toBe(201)
    expect(again.body).toEqual(first.body)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await contactsOf(ctx, b.id)).toHaveLength(1)
  })

  test('the same key with another body is 409', async () => {
    const b = await seedBusiness(ctx)
    expect((await create(b.apiKey, 'lead-2', leadBody())).status).toBe(201)
    const other = await create(b.apiKey, 'lead-2', leadBody())
    expect(other.status, other.text).toBe(409)
    expect(other.body.code).toBe('idempotency_conflict')
    expect(await contactsOf(ctx, b.id)).toHaveLength(1)
  })

  test('a duplicate refusal is stored and replayed as the same 409 with existing_id', async () => {
    const b = await seedBusiness(ctx)
    const body = leadBody()
    const id = await createLead(ctx, b.apiKey, body)
    const first = await create(b.apiKey, 'lead-3', { ...body, name: 'otro' })
    expect(first.status, first.text).toBe(409)
    expect(first.body.existing_id).toBe(id)
    const again = await create(b.apiKey, 'lead-3', { ...body, name: 'otro' })
    expect(again.status).toBe(409)
    expect(again.body.existing_id).toBe(id)
    expect(again.body.detail).toBe('Duplicate contact')
  })

  test('concurrent twins with one key create one lead', async () => {
    const b = await seedBusiness(ctx)
    const body = leadBody()
    const results = await Promise.all(Array.from({ length: 10 }, () => create(b.apiKey, 'twin', body)))
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201))
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1)
    expect(await contactsOf(ctx, b.id)).toHaveLength(1)
  })

  test('an empty or over-long key is 422', async () => {
    expect((await create(biz.apiKey, '', leadBody())).status).toBe(422)
    expect((await create(biz.apiKey, 'k'.repeat(201), leadBody())).status).toBe(422)
  })
})
