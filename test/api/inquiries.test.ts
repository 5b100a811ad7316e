import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { Value } from '@sinclair/typebox/value'
import { LeadInquiryResponse } from '../../shared/leads/schemas'
import { disableOutreachEndpoint } from '../../db/queries/outreach'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { configureEndpoint, deliveriesOf, inquiryBody } from '../helpers/outreach'
import { createProperty } from '../helpers/properties'
import { resolve } from '../fuzz/openapi-schema'

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

const post = (key: string, body: unknown, headers: Record<string, string> = {}) => call(ctx.app, 'POST', '/v1/leads/inquiries', { key, body, headers })
const contactsOf = async (businessId: number) =>
  ctx.deps.database.db.execute<Record<string, any>>(sql`select * from contacts where business_id = ${businessId} order by id`)
const inquiriesOf = async (businessId: number) =>
  ctx.deps.database.db.execute<Record<string, any>>(sql`select * from lead_inquiries where business_id = ${businessId} order by id`)

describe('POST /v1/leads/inquiries: contacts', () => {
  let biz: SeededBusiness
  beforeAll(async () => {
    biz = await seedBusiness(ctx)
  })

  test('a new person: contact created from contact + lead, inquiry attached, 200', async () => {
    const b = await seedBusiness(ctx)
    const propertyId = await createProperty(ctx, b.apiKey)
    const res = await post(
      b.apiKey,
      inquiryBody({
        property_id: propertyId,
        lead: {
          type: 'demandante',
          operation: 'venta',
          property_types: ['apartamento', 'casa'],
          rating: 4,
          urgency: 'media-urgencia',
          budget_max: 300000,
          min_bedrooms: 2,
          notes: 'Prefiere planta alta',
        },
      }),
    )
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({
      status: 'ok',
      inquiry_id: expect.any(Number),
      lead_id: expect.any(Number),
      lead_created: true,
      outreach: 'not_configured',
      authenticated_as: b.name,
    })
    const [contact] = await contactsOf(b.id)
    expect(contact).toMatchObject({
      id: res.body.lead_id,
      type: 'demandante',
      name: 'Ana García',
      email: 'ana@example.com',
      phone: '+34600111222',
      source: 'web-contact-form',
      operation: 'venta',
      property_types: ['apartamento', 'casa'],
      rating: 4,
      urgency: 'media-urgencia',
      budget_max: 300000,
      min_bedrooms: 2,
      notes: 'Prefiere planta alta',
    })
    const [inquiry] = await inquiriesOf(b.id)
    expect(inquiry).toMatchObject({
      id: res.body.inquiry_id,
      contact_id: res.body.lead_id,
      property_id: propertyId,
      message: inquiryBody().message,
      contact_name: 'Ana García',
      contact_email: 'ana@example.com',
      contact_phone: '+34600111222',
      source: 'web-contact-form',
      source_page: 'https://inmobiliaria.example/propiedades/1',
    })
  })

  test('without lead fields the contact gets the defaults (demandante, no rating, empty notes)', async () => {
    const b = await seedBusiness(ctx)
    const res = await post(b.apiKey, { contact: { name: 'Luis', phone: '611 222 333' }, message: 'Hola' })
    expect(res.status, res.text).toBe(200)
    const [contact] = await contactsOf(b.id)
    expect(contact).toMatchObject({
      type: 'demandante',
      name: 'Luis',
      email: null,
      phone: '+34611222333',
      source: null,
      operation: null,
      property_types: [],
      rating: null,
      urgency: null,
      notes: '',
    })
  })

  test('an existing contact with the same phone (any spelling) gets the inquiry and is not modified', async () => {
    const db = ctx.deps.database.db
    const [existing] = await db.execute<{ id: number; updated_at: Date }>(
      sql`insert into contacts (business_id, type, name, phone, notes, rating, updated_at)
        values (${biz.id}, 'propietario', 'Old Name', '+34622000111', 'keep me', 2, now() - interval '1 day') returning id, updated_at`,
    )
    const before = (await db.execute(sql`select * from contacts where id = ${existing.id}`))[0]
    const res = await post(
      biz.apiKey,
      inquiryBody({
        contact: { name: 'New Name', email: 'new@example.com', phone: '0034 622 000 111' },
        lead: { type: 'demandante', rating: 5, notes: 'overwrite?' },
      }),
    )
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ lead_id: existing.id, lead_created: false })
    expect((await db.execute(sql`select * from contacts where id = ${existing.id}`))[0]).toEqual(before)
    const inquiry = (await inquiriesOf(biz.id)).find((i) => i.id === res.body.inquiry_id)!
    expect(inquiry).toMatchObject({ contact_id: existing.id, contact_name: 'New Name', contact_email: 'new@example.com', contact_phone: '+34622000111' })
  })

  test('an existing contact with the same email, case-insensitively, is matched', async () => {
    const db = ctx.deps.database.db
    const [existing] = await db.execute<{ id: number }>(
      sql`insert into contacts (business_id, name, email) values (${biz.id}, 'Marta', 'Marta.Ruiz@Example.com') returning id`,
    )
    const res = await post(biz.apiKey, { contact: { name: 'marta', email: 'marta.ruiz@example.COM' }, message: 'Hola' })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ lead_id: existing.id, lead_created: false })
    expect((await db.execute<{ name: string; email: string }>(sql`select name, email from contacts where id = ${existing.id}`))[0]).toEqual({
      name: 'Marta',
      email: 'Marta.Ruiz@Example.com',
    })
  })

  test('phone wins when phone and email point at different contacts', async () => {
    const db = ctx.deps.database.db
    const [byPhone] = await db.execute<{ id: number }>(
      sql`insert into contacts (business_id, name, phone) values (${biz.id}, 'P', '+34633000111') returning id`,
    )
    await db.execute(sql`insert into contacts (business_id, name, email) values (${biz.id}, 'E', 'e-only@example.com')`)
    const res = await post(biz.apiKey, { contact: { name: 'X', email: 'e-only@example.com', phone: '+34633000111' }, message: 'Hola' })
    expect(res.body).toMatchObject({ lead_id: byPhone.id, lead_created: false })
  })

  test('contacts of another business are not matched', async () => {
    const other = await seedBusiness(ctx)
    await ctx.deps.database.db.execute(sql`insert into contacts (business_id, name, phone) values (${other.id}, 'Other', '+34644000111')`)
    const b = await seedBusiness(ctx)
    const res = await post(b.apiKey, { contact: { name: 'Mine', phone: '+34644000111' }, message: 'Hola' })
    expect(res.body.lead_created).toBe(true)
  })

  test('20 concurrent inquiries from one new person end with one contact and 20 inquiries', async () => {
    const b = await seedBusiness(ctx)
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(b.apiKey, {
          contact: { name: `Same ${i}`, email: i % 2 ? 'same@example.com' : undefined, phone: i % 3 ? '+34655000111' : '655000111' },
          message: `msg ${i}`,
        }),
      ),
    )
    for (const r of responses) expect(r.status, r.text).toBe(200)
    const contacts = await contactsOf(b.id)
    expect(contacts.length).toBe(1)
    expect(new Set(responses.map((r) => r.body.lead_id))).toEqual(new Set([contacts[0].id]))
    expect(responses.filter((r) => r.body.lead_created).length).toBe(1)
    expect((await inquiriesOf(b.id)).length).toBe(20)
  })

  test('concurrent inquiries by email only and by phone only of one new person', async () => {
    const b = await seedBusiness(ctx)
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => post(b.apiKey, { contact: { name: 'Solo', email: 'SOLO@example.com' }, message: 'x' })),
    )
    for (const r of responses) expect(r.status, r.text).toBe(200)
    expect((await contactsOf(b.id)).length).toBe(1)
    expect(responses.filter((r) => r.body.lead_created).length).toBe(1)
  })
})

describe('POST /v1/leads/inquiries: outreach outcome', () => {
  test('configured and enabled → "queued": a pending delivery and its job keyed by the delivery id', async () => {
    const b = await seedBusiness(ctx)
    await configureEndpoint(ctx, b.id, 'http://127.0.0.1:9/never')
    const res = await post(b.apiKey, inquiryBody())
    expect(res.status, res.text).toBe(200)
    expect(res.body.outreach).toBe('queued')
    const [delivery] = await deliveriesOf(ctx, b.id)
    expect(delivery).toMatchObject({ state: 'pending', attempts: 0, inquiry_id: res.body.inquiry_id })
    expect(delivery.id).toMatch(/^dlv_[0-9a-f]{24}$/)
    const job = await ctx.deps.queues.get('outreach').getJob(`delivery-${delivery.id}`)
    expect(job?.data).toEqual({ deliveryId: delivery.id })
    expect(job?.opts.attempts).toBe(20)
    expect(job?.opts.backoff).toEqual({ type: 'outreach' })
  })

  test('outreach:false → "skipped" whether or not configured; no delivery', async () => {
    const b = await seedBusiness(ctx)
    const unconfigured = await post(b.apiKey, inquiryBody({ outreach: false }))
    expect(unconfigured.body.outreach).toBe('skipped')
    await configureEndpoint(ctx, b.id, 'http://127.0.0.1:9/never')
    const configured = await post(b.apiKey, inquiryBody({ outreach: false }))
    expect(configured.body.outreach).toBe('skipped')
    expect(await deliveriesOf(ctx, b.id)).toEqual([])
  })

  test('no endpoint, or a disabled one → "not_configured"; no delivery', async () => {
    const b = await seedBusiness(ctx)
    expect((await post(b.apiKey, inquiryBody())).body.outreach).toBe('not_configured')
    await configureEndpoint(ctx, b.id, 'http://127.0.0.1:9/never')
    await disableOutreachEndpoint(ctx.deps.database.db, b.id)
    expect((await post(b.apiKey, inquiryBody({ outreach: true }))).body.outreach).toBe('not_configured')
    expect(await deliveriesOf(ctx, b.id)).toEqual([])
  })
})

describe('POST /v1/leads/inquiries: idempotency', () => {
  test('a retry with the same Idempotency-Key replays the answer and creates nothing', async () => {
    const b = await seedBusiness(ctx)
    await configureEndpoint(ctx, b.id, 'http://127.0.0.1:9/never')
    const headers = { 'idempotency-key': 'form-submission-1' }
    const first = await post(b.apiKey, inquiryBody(), headers)
    const second = await post(b.apiKey, inquiryBody(), headers)
    expect(first.status, first.text).toBe(200)
    expect(second.status).toBe(200)
    expect(second.body).toEqual(first.body)
    expect(second.headers.get('idempotent-replayed')).toBe('true')
    expect((await inquiriesOf(b.id)).length).toBe(1)
    expect((await deliveriesOf(ctx, b.id)).length).toBe(1)
    const other = await post(b.apiKey, inquiryBody({ message: 'otra cosa' }), headers)
    expect(other.status).toBe(409)
  })
})

describe('POST /v1/leads/inquiries: refusals', () => {
  let biz: SeededBusiness
  beforeAll(async () => {
    biz = await seedBusiness(ctx)
  })

  test.each([
    ['no email nor phone', { contact: { name: 'Ana' } }, ['body', 'contact']],
    ['null email and phone', { contact: { name: 'Ana', email: null, phone: null } }, ['body', 'contact']],
    ['invalid phone', { contact: { name: 'Ana', phone: '123' } }, ['body', 'contact', 'phone']],
    ['invalid email', { contact: { name: 'Ana', email: 'not-an-email' } }, ['body', 'contact', 'email']],
    ['missing name', { contact: { email: 'a@example.com' } }, ['body', 'contact', 'name']],
    ['blank name', { contact: { name: '   ', email: 'a@example.com' } }, ['body', 'contact', 'name']],
    ['empty message', { message: '' }, ['body', 'message']],
    ['message over 5000', { message: 'x'.repeat(5001) }, ['body', 'message']],
    ['missing message', { message: undefined }, ['body', 'message']],
    ['source_page not a URL', { source_page: 'inmobiliaria.example/p' }, ['body', 'source_page']],
    ['source_page not http(s)', { source_page: 'ftp://inmobiliaria.example/p' }, ['body', 'source_page']],
    ['property_id 0', { property_id: 0 }, ['body', 'property_id']],
    ['lead.type', { lead: { type: 'comprador' } }, ['body', 'lead', 'type']],
    ['lead.operation', { lead: { operation: 'compra' } }, ['body', 'lead', 'operation']],
    ['lead.property_types', { lead: { property_types: ['castillo'] } }, ['body', 'lead', 'property_types', 0]],
    ['lead.rating 6', { lead: { rating: 6 } }, ['body', 'lead', 'rating']],
    ['lead.rating 0', { lead: { rating: 0 } }, ['body', 'lead', 'rating']],
    ['lead.urgency', { lead: { urgency: 'urgente' } }, ['body', 'lead', 'urgency']],
    ['lead.budget_max negative', { lead: { budget_max: -1 } }, ['body', 'lead', 'budget_max']],
    ['lead.min_bedrooms not integer', { lead: { min_bedrooms: 1.5 } }, ['body', 'lead', 'min_bedrooms']],
    ['unknown top-level field', { mesage: 'typo' }, ['body', 'mesage']],
    ['unknown lead field', { lead: { budget: 100 } }, ['body', 'lead', 'budget']],
    ['outreach not boolean', { outreach: 'yes' }, ['body', 'outreach']],
  ])('%s → 422 naming the field', async (_name, overrides, loc) => {
    const body = inquiryBody(overrides as Record<string, unknown>)
    const res = await post(biz.apiKey, body)
    expect(res.status, res.text).toBe(422)
    expect(res.headers.get('content-type')).toContain('application/problem+json')
    expect(res.body.errors.map((e: { loc: unknown }) => e.loc)).toContainEqual(loc)
  })

  test('the invalid-phone 422 carries the phone message', async () => {
    const res = await post(biz.apiKey, inquiryBody({ contact: { name: 'Ana', phone: '+34 123' } }))
    expect(res.status).toBe(422)
    expect(res.body.detail).toContain('Invalid phone number')
  })

  test('a property of another business, or a missing one, is a 422 on property_id; nothing is stored', async () => {
    const other = await seedBusiness(ctx)
    const foreign = await createProperty(ctx, other.apiKey)
    for (const propertyId of [foreign, 2147483000]) {
      const res = await post(biz.apiKey, inquiryBody({ property_id: propertyId, contact: { name: 'P', phone: '+34666000999' } }))
      expect(res.status, res.text).toBe(422)
      expect(res.body.errors).toEqual([{ loc: ['body', 'property_id'], msg: 'No property with this id in this business', type: 'not_found' }])
    }
    expect((await contactsOf(biz.id)).filter((c) => c.phone === '+34666000999')).toEqual([])
  })

  test('403 without leads:ingest; 401 without a key', async () => {
    const { apiKey } = await biz.key(['leads:read', 'leads:write', 'properties:read', 'properties:write'])
    const forbidden = await post(apiKey, inquiryBody())
    expect(forbidden.status).toBe(403)
    const ingestOnly = await biz.key(['leads:ingest'])
    expect((await post(ingestOnly.apiKey, inquiryBody({ contact: { name: 'I', phone: '+34677000111' } }))).status).toBe(200)
    const anonymous = await call(ctx.app, 'POST', '/v1/leads/inquiries', { body: inquiryBody() })
    expect(anonymous.status).toBe(401)
  })

  test('malformed JSON and a non-JSON content type are 422', async () => {
    expect((await post(biz.apiKey, '{"contact":')).status).toBe(422)
    expect(
      (await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: biz.apiKey, body: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }))
        .status,
    ).toBe(422)
  })
})

describe('POST /v1/leads/inquiries: OpenAPI', () => {
  test('declared with its operationId, scope, Idempotency-Key header, request and response schemas', async () => {
    const doc = (await call(ctx.app, 'GET', '/openapi.json')).body
    const op = doc.paths['/v1/leads/inquiries'].post
    expect(op.operationId).toBe('createLeadInquiry')
    expect(op['x-required-scope']).toBe('leads:ingest')
    expect(op.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'Idempotency-Key' }))
    // Bodies are `$ref`s to named components.
    const req: any = resolve(doc, op.requestBody.content['application/json'].schema)
    expect(req.required).toEqual(['contact', 'message'])
    expect(req.additionalProperties).toBe(false)
    expect((resolve(doc, op.responses['200'].content['application/json'].schema) as any).properties.outreach.enum).toEqual([
      'queued',
      'skipped',
      'not_configured',
    ])
    expect(Object.keys(op.responses['422'].content)).toEqual(['application/problem+json'])
  })

  test('answers match the declared response schema', async () => {
    const b = await seedBusiness(ctx)
    const res = await post(b.apiKey, inquiryBody())
    expect([...Value.Errors(LeadInquiryResponse, res.body)].map((e) => `${e.path}: ${e.message}`)).toEqual([])
  })
})
