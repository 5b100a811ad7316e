/**
 * The typed client (clients/typescript/) against the running service on a real listener: its
 * generated types match what the app serves, and one whole workflow runs through it with the
 * real workers: create a property, upload an image (upload URL, PUT, complete), publish, find it
 * in the public catalogue; ingest a rental lead; send an inquiry and read it back.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createClient, type ApiClient, type components } from '../../clients/typescript'
import { SCHEMA_FILE, schemaSource, servedDocument } from '../../clients/typescript/generate'
import { createLogger } from '../../shared/platform/logger'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { eventually, seedBusiness, type SeededBusiness } from '../helpers/context'
import { smallWebp } from '../helpers/images'
import { uniquePhone } from '../helpers/leads'
import { startService, type RunningService } from '../helpers/running-service'

let service: RunningService
let workers: RunningWorkers
let biz: SeededBusiness
let api: ApiClient

beforeAll(async () => {
  service = await startService({ IMAGE_THREADS: '1' })
  workers = await startWorkers(service.ctx.config, createLogger('silent'), [
    'upload-complete',
    'image-watermark',
    'catalogue-reindex',
    'lead-ingest',
    'outreach',
  ])
  biz = await seedBusiness(service.ctx)
  api = createClient({ baseUrl: service.baseUrl, apiKey: biz.apiKey })
}, 30_000)

afterAll(async () => {
  await workers?.close(5000)
  await service?.close()
}, 30_000)

describe('clients/typescript', () => {
  test('schema.ts is what `bun run gen:client` makes from the served /openapi.json', async () => {
    const fresh = await schemaSource(await servedDocument(service.ctx.app))
    const committed = await Bun.file(SCHEMA_FILE).text()
    // One message, not a 9,000-line diff: the fix is always the same command.
    if (fresh !== committed) throw new Error('clients/typescript/schema.ts differs from a fresh generation: run `bun run gen:client` and commit it')
  }, 30_000)

  test('the key goes as X-Api-Key; a wrong key is a typed 401 problem', async () => {
    const me = await api.GET('/v1/me')
    expect(me.response.status).toBe(200)
    expect(me.data?.data.business.name).toBe(biz.name)

    const stranger = createClient({ baseUrl: service.baseUrl, apiKey: 'AC_LIVE_nope.nope' })
    const { data, error, response } = await stranger.GET('/v1/me')
    expect(response.status).toBe(401)
    expect(data).toBeUndefined()
    expect(response.headers.get('content-type')).toStartWith('application/problem+json')
    expect(error?.detail).toBeString()
  }, 30_000)

  test('create, upload an image, publish, list in the public catalogue', async () => {
    const input: components['schemas']['PropertyInput'] = {
      operations: ['venta'],
      type: 'apartamento',
      subtype: 'atico',
      title: 'Ático con terraza (cliente tipado)',
      description: '<p>Luminoso</p>',
      pricing: { sale: 250000 },
      location: {
        city: 'Valencia',
        province: 'Valencia',
        postal_code: '46004',
        address: 'Calle de Colón 12',
        coordinates: { latitude: 39.46987, longitude: -0.37634 },
        visibility: 'approximate',
      },
      area: { total: 95 },
      bedrooms: 3,
      bathrooms: 2,
    }
    const created = await api.POST('/v1/properties', { body: input })
    expect(created.response.status, JSON.stringify(created.error)).toBe(201)
    const property_id = created.data!.id

    const photo = await smallWebp()
    const upload = await api.POST('/v1/properties/{property_id}/images/uploads', {
      params: { path: { property_id } },
      body: { files: [{ filename: 'salon.webp', content_type: 'image/webp', size: photo.byteLength }] },
    })
    expect(upload.response.status, JSON.stringify(upload.error)).toBe(201)
    const [target] = upload.data!.files
    // The presigned URL is storage, not an API operation: a plain PUT with exactly the given headers.
    expect(target.url.startsWith(`${service.baseUrl}/`)).toBe(true)
    const put = await fetch(target.url, { method: target.method, headers: target.headers, body: photo })
    expect(put.status, await put.text()).toBe(200)

    const upload_id = upload.data!.upload_id
    const completed = await api.POST('/v1/properties/{property_id}/images/uploads/{upload_id}/complete', { params: { path: { property_id, upload_id } } })
    expect(completed.response.status, JSON.stringify(completed.error)).toBe(202)
    const session = await eventually(
      async () => {
        const { data } = await api.GET('/v1/properties/{property_id}/images/uploads/{upload_id}', { params: { path: { property_id, upload_id } } })
        return data && ['completed', 'failed'].includes(data.data.state) ? data.data : null
      },
      { timeoutMs: 20_000, what: 'the upload to be processed' },
    )
    expect(session.state).toBe('completed')
    expect(session.files[0]).toMatchObject({ file_id: target.file_id, state: 'ready' })

    const published = await api.POST('/v1/properties/{property_id}/publish', { params: { path: { property_id } } })
    expect(published.response.status, JSON.stringify(published.error)).toBe(200)

    const listed = await eventually(
      async () => {
        const { data } = await api.GET('/v1/properties', { params: { query: { city: 'Valencia', limit: 50 } } })
        const entry = data?.data.find((p) => p.id === property_id)
        return entry && entry.images.length === 1 ? entry : null
      },
      { timeoutMs: 20_000, what: 'the published property with its image in the catalogue' },
    )
    expect(listed.title).toBe(input.title)
    expect(listed.images[0].is_primary).toBe(true)
    const cover = await fetch(listed.images[0].url)
    expect(cover.status).toBe(200)
    expect(cover.headers.get('content-type')).toBe('image/jpeg')
  }, 60_000)

  test('ingest a rental lead; it is stored and found by phone', async () => {
    const phone = uniquePhone()
    const body: components['schemas']['RentalIngestRequest'] = {
      id: `sub_${crypto.randomUUID()}`,
      createdAt: new Date().toISOString(),
      source: 'landing-alquiler',
      sourcePage: 'https://inmobiliaria.example/alquiler-valencia',
      contact: { name: 'Lucía Martín', phone },
      search: { budget: '800-1100', habs: '2', location: { name: 'Valencia' } },
    }
    const ingested = await api.POST('/v1/leads/ingest', { body })
    expect(ingested.response.status, JSON.stringify(ingested.error)).toBe(200)
    expect(ingested.data).toEqual({ status: 'ok', authenticated_as: biz.name })

    const lead = await eventually(async () => (await api.GET('/v1/leads', { params: { query: { phone } } })).data?.data[0], {
      timeoutMs: 20_000,
      what: `the ingested lead ${phone}`,
    })
    expect(lead).toMatchObject({ phone, name: 'Lucía Martín', operation: 'alquiler', budget_max: 1100, min_bedrooms: 2, source: 'landing-alquiler' })
  }, 30_000)

  test('send an inquiry about a property; it reads back on its lead', async () => {
    const created = await api.POST('/v1/properties', {
      body: { operations: ['alquiler'], type: 'casa', title: 'Casa con jardín', pricing: { rent: 1200 }, location: { city: 'Valencia' }, area: { total: 120 } },
    })
    expect(created.response.status, JSON.stringify(created.error)).toBe(201)
    const property_id = created.data!.id
    const sent = await api.POST('/v1/leads/inquiries', {
      params: { header: { 'Idempotency-Key': crypto.randomUUID() } },
      body: {
        contact: { name: 'Ana García', email: `ana.${crypto.randomUUID()}@example.com` },
        message: '¿Sigue disponible?',
        property_id,
        source: 'web-contact-form',
      },
    })
    expect(sent.response.status, JSON.stringify(sent.error)).toBe(200)
    expect(sent.data).toMatchObject({ status: 'ok', lead_created: true, outreach: 'not_configured' })

    const { data } = await api.GET('/v1/leads/{lead_id}/inquiries', { params: { path: { lead_id: sent.data!.lead_id } } })
    expect(data?.data).toEqual([expect.objectContaining({ id: sent.data!.inquiry_id, property_id, message: '¿Sigue disponible?', outreach: 'not_configured' })])

    const missing = await api.GET('/v1/leads/{lead_id}', { params: { path: { lead_id: 2_000_000_000 } } })
    expect(missing.response.status).toBe(404)
    expect(missing.error?.detail).toBe('Lead not found')
  }, 30_000)
})
