/**
 * Reading back and removing your own listings (contract §9.4): GET /properties/{id}/private
 * returns what was written (PATCH merged, drafts included), DELETE /properties/{id} removes the
 * listing from every read at once and records `property.deleted`, and GET /leads/{id}/inquiries
 * lists a lead's inquiries newest first with the state of their outreach.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { createLogger } from '../../shared/platform/logger'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createLead } from '../helpers/leads'
import { configureEndpoint, inquiryBody } from '../helpers/outreach'
import { createProperty, createPublished, propertyBody } from '../helpers/properties'
import { relayAll } from '../helpers/relay'

let ctx: TestContext
let biz: SeededBusiness
let other: SeededBusiness
let workers: RunningWorkers | undefined
let receiver: ReturnType<typeof Bun.serve> | undefined

beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  other = await seedBusiness(ctx)
})
afterAll(async () => {
  receiver?.stop(true)
  await workers?.close(5000)
  await ctx.close()
})

const api = (method: string, path: string, body?: unknown, key = biz.apiKey) => call(ctx.app, method, path, { key, body })

describe('GET /properties/{id}/private', () => {
  test('a draft reads back as written, exact coordinates and visibility included; a PATCH reads back merged', async () => {
    const owner = await createLead(ctx, biz.apiKey, { type: 'propietario' })
    const body = propertyBody({
      owner_id: owner,
      location: { city: 'Valencia', address: 'Calle de Colón 12', coordinates: { latitude: 39.469871, longitude: -0.376342 }, visibility: 'hidden' },
      characteristics: { elevator: true, translations: { en: { title: 'Penthouse' } } },
      features: [{ key: 'pool', label: 'Piscina', value: true }],
      is_featured: true,
    })
    const id = await createProperty(ctx, biz.apiKey, body)
    expect((await api('GET', `/v1/properties/${id}`)).status).toBe(404)
    const read = await api('GET', `/v1/properties/${id}/private`)
    expect(read.status, read.text).toBe(200)
    expect(read.body.authenticated_as).toBe(biz.name)
    const { data } = read.body
    expect(data).toMatchObject({
      id,
      status: 'disponible',
      published: false,
      operations: ['venta'],
      type: 'apartamento',
      subtype: 'atico',
      title: body.title,
      description: body.description,
      pricing: { sale: 250000 },
      location: body.location,
      area: body.area,
      bedrooms: 3,
      bathrooms: 2,
      characteristics: body.characteristics,
      features: body.features,
      owner_id: owner,
      is_featured: true,
      images: [],
      videos: [],
    })
    expect(data.location.coordinates).toEqual({ latitude: 39.469871, longitude: -0.376342 })

    const patch = {
      pricing: { rent: 1200 },
      operations: ['venta', 'alquiler'],
      location: { visibility: 'public', postal_code: '46004' },
      subtype: null,
      owner_id: null,
      characteristics: { translations: { en: { description: 'Sunny' } } },
    }
    expect((await api('PATCH', `/v1/properties/${id}`, patch)).status).toBe(200)
    const after = (await api('GET', `/v1/properties/${id}/private`)).body.data
    expect(after).toMatchObject({
      operations: ['venta', 'alquiler'],
      pricing: { sale: 250000, rent: 1200 },
      location: { ...body.location, visibility: 'public', postal_code: '46004' },
      subtype: null,
      owner_id: null,
      characteristics: { elevator: true, translations: { en: { title: 'Penthouse', description: 'Sunny' } } },
    })
    expect(new Date(after.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(data.updated_at).getTime())

    expect((await api('POST', `/v1/properties/${id}/publish`)).status).toBe(200)
    expect((await api('GET', `/v1/properties/${id}/private`)).body.data.published).toBe(true)
  })

  test('another business’s property is a 404; a malformed id a 422; reading needs properties:write', async () => {
    const id = await createProperty(ctx, biz.apiKey)
    expect((await api('GET', `/v1/properties/${id}/private`, undefined, other.apiKey)).status).toBe(404)
    expect((await api('GET', '/v1/properties/0x1/private')).status).toBe(422)
    const { apiKey } = await biz.key(['properties:read'])
    expect((await api('GET', `/v1/properties/${id}/private`, undefined, apiKey)).status).toBe(403)
  })
})

describe('DELETE /properties/{id}', () => {
  test('gone from every read at once, `property.deleted` recorded; inquiries about it keep their text with property_id null', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    const inquiry = await api('POST', '/v1/leads/inquiries', inquiryBody({ property_id: id, outreach: false }))
    expect(inquiry.status, inquiry.text).toBe(200)
    expect((await api('DELETE', `/v1/properties/${id}`, undefined, other.apiKey)).status).toBe(404)
    const res = await api('DELETE', `/v1/properties/${id}`)
    expect(res.body).toEqual({ status: 'ok', id })
    for (const path of [`/v1/properties/${id}`, `/v1/properties/${id}/private`, `/v1/properties/${id}/images`, `/v1/properties/${id}/videos`])
      expect((await api('GET', path)).status, path).toBe(404)
    expect((await api('PATCH', `/v1/properties/${id}`, { title: 'x' })).status).toBe(404)
    expect((await api('POST', `/v1/properties/${id}/publish`)).status).toBe(404)
    expect((await api('GET', '/v1/properties?limit=1000')).body.data.some((p: any) => p.id === id)).toBe(false)
    await relayAll(ctx.deps)
    const events = await ctx.deps.database.db.execute<{ type: string; data: any }>(
      sql`select type, data from events where business_id = ${biz.id} and type = 'property.deleted' order by sequence`,
    )
    expect(events.map((e) => e.data.object)).toContainEqual({ id })
    const inquiries = await api('GET', `/v1/leads/${inquiry.body.lead_id}/inquiries`)
    expect(inquiries.body.data[0]).toMatchObject({ id: inquiry.body.inquiry_id, property_id: null, message: inquiryBody().message })
  })
})

describe('GET /leads/{id}/inquiries', () => {
  test('newest first, with their outreach: skipped, not_configured, queued and then delivered; paged with count', async () => {
    const phone = '+34 611 222 333'
    const contact = { name: 'Marta', phone, email: 'marta@example.com' }
    const skipped = await api('POST', '/v1/leads/inquiries', inquiryBody({ contact, message: 'primera', outreach: false }))
    const notConfigured = await api('POST', '/v1/leads/inquiries', inquiryBody({ contact, message: 'segunda' }))
    expect(notConfigured.body.outreach).toBe('not_configured')
    const delivered: string[] = []
    receiver = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        delivered.push(await req.text())
        return new Response('ok')
      },
    })
    await configureEndpoint(ctx, biz.id, `http://127.0.0.1:${receiver.port}/hook`)
    const queued = await api('POST', '/v1/leads/inquiries', inquiryBody({ contact, message: 'tercera', source: undefined, source_page: undefined }))
    expect(queued.body.outreach).toBe('queued')
    const leadId = skipped.body.lead_id
    expect(notConfigured.body.lead_id).toBe(leadId)

    const list = await api('GET', `/v1/leads/${leadId}/inquiries`)
    expect(list.status, list.text).toBe(200)
    expect(list.body).toMatchObject({ status: 'ok', count: 3, limit: 100, offset: 0, authenticated_as: biz.name })
    expect(list.body.data.map((i: any) => [i.id, i.message, i.outreach])).toEqual([
      [queued.body.inquiry_id, 'tercera', 'queued'],
      [notConfigured.body.inquiry_id, 'segunda', 'not_configured'],
      [skipped.body.inquiry_id, 'primera', 'skipped'],
    ])
    expect(list.body.data[2]).toEqual({
      id: skipped.body.inquiry_id,
      lead_id: leadId,
      property_id: null,
      message: 'primera',
      source: 'web-contact-form',
      source_page: 'https://inmobiliaria.example/propiedades/1',
      outreach: 'skipped',
      created_at: expect.any(String),
    })
    expect([list.body.data[0].source, list.body.data[0].source_page]).toEqual([null, null])

    workers = await startWorkers(ctx.config, createLogger('silent'), ['outreach'])
    await eventually(async () => (await api('GET', `/v1/leads/${leadId}/inquiries`)).body.data[0].outreach === 'delivered', { what: 'the delivery' })
    expect(delivered).toHaveLength(1)

    const page = await api('GET', `/v1/leads/${leadId}/inquiries?limit=1&offset=1`)
    expect(page.body).toMatchObject({ count: 3, limit: 1, offset: 1 })
    expect(page.body.data.map((i: any) => i.message)).toEqual(['segunda'])
    expect((await api('GET', `/v1/leads/${leadId}/inquiries?limit=0`)).body.errors[0].loc).toEqual(['query', 'limit'])
  }, 30_000)

  test('a lead of another business, or none, is a 404; reading needs leads:read', async () => {
    const leadId = await createLead(ctx, biz.apiKey)
    expect((await api('GET', `/v1/leads/${leadId}/inquiries`)).body).toMatchObject({ data: [], count: 0 })
    expect((await api('GET', `/v1/leads/${leadId}/inquiries`, undefined, other.apiKey)).status).toBe(404)
    expect((await api('GET', '/v1/leads/2147483647/inquiries')).status).toBe(404)
    const { apiKey } = await biz.key(['leads:ingest', 'leads:write'])
    expect((await api('GET', `/v1/leads/${leadId}/inquiries`, undefined, apiKey)).status).toBe(403)
  })
})
