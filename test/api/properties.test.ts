import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createProperty, createPublished } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

describe('create → publish → read', () => {
  test('a created property is a draft until published', async () => {
    const id = await createProperty(ctx, biz.apiKey)
    const draft = await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: biz.apiKey })
    expect(draft.status, draft.text).toBe(404)
    expect(draft.body.detail).toBe('Property not found')
    expect(draft.headers.get('content-type')).toContain('application/problem+json')

    const pub = await call(ctx.app, 'POST', `/v1/properties/${id}/publish`, { key: biz.apiKey })
    expect(pub.status, pub.text).toBe(200)
    expect(pub.body).toEqual({ status: 'ok', id })

    const res = await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: biz.apiKey })
    expect(res.status, res.text).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('x-request-id')).toBeTruthy()
    expect(res.body).toEqual({
      status: 'ok',
      authenticated_as: biz.name,
      data: {
        id,
        operation: 'venta',
        type: 'apartamento',
        subtype: 'Ático',
        title: 'Ático con terraza',
        price: 250000,
        size_total: 95,
        bedrooms: 3,
        bathrooms: 2,
        postal_code: '46004',
        description: '<p>Luminoso</p>',
        images: [],
        videos: [],
        specs: { usable_area: 82, address_privacy: 'public', price_calc: {} },
        features: [],
        status: 'disponible',
        address: 'Calle de Colón 12, 3º B, 46004 Valencia',
        city: 'Valencia',
        province: 'Valencia',
        country: 'España',
        lat: 39.46987,
        lon: -0.37634,
        is_featured: false,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    })
  })

  test('publish and unpublish are idempotent and read-your-writes', async () => {
    const id = await createProperty(ctx, biz.apiKey)
    for (let i = 0; i < 2; i++) {
      const r = await call(ctx.app, 'POST', `/v1/properties/${id}/publish`, { key: biz.apiKey })
      expect(r.status, r.text).toBe(200)
    }
    expect((await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: biz.apiKey })).status).toBe(200)
    for (let i = 0; i < 2; i++) {
      const r = await call(ctx.app, 'POST', `/v1/properties/${id}/unpublish`, { key: biz.apiKey })
      expect(r.status, r.text).toBe(200)
      expect(r.body).toEqual({ status: 'ok', id })
    }
    expect((await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: biz.apiKey })).status).toBe(404)
    const list = await call(ctx.app, 'GET', '/v1/properties?limit=1000', { key: biz.apiKey })
    expect(list.body.data.map((p: any) => p.id)).not.toContain(id)
  })

  test('an update of a published property is visible at once', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    const up = await call(ctx.app, 'PATCH', `/v1/properties/${id}`, {
      key: biz.apiKey,
      body: { title: 'Nuevo título', pricing: { rent: 1200 }, operations: ['venta', 'alquiler'] },
    })
    expect(up.status, up.text).toBe(200)
    expect(up.body).toEqual({ status: 'ok', id })
    const res = await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: biz.apiKey })
    expect(res.body.data.title).toBe('Nuevo título')
    expect(res.body.data.operation).toBe('venta,alquiler')
    expect(res.body.data.price).toBe(250000)
    expect(res.body.data.specs.price_calc).toEqual({ price_alq: 1200 })
  })

  test('list returns the page, count, echo and authenticated_as', async () => {
    const b = await seedBusiness(ctx)
    const ids = [await createPublished(ctx, b.apiKey), await createPublished(ctx, b.apiKey)]
    await createProperty(ctx, b.apiKey)
    const res = await call(ctx.app, 'GET', '/v1/properties', { key: b.apiKey })
    expect(res.status, res.text).toBe(200)
    expect(res.body.count).toBe(2)
    expect(res.body.limit).toBe(100)
    expect(res.body.offset).toBe(0)
    expect(res.body.authenticated_as).toBe(b.name)
    expect(res.body.data.map((p: any) => p.id)).toEqual([ids[1], ids[0]])
    expect(res.body.filters).toEqual({
      status: null,
      operation: null,
      rental_type: null,
      type: null,
      subtype: null,
      city: null,
      locations: null,
      min_price: null,
      max_price: null,
      min_bedrooms: null,
      is_featured: null,
      sort: null,
      q: null,
    })
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('x-request-id')).toBeTruthy()
    const empty = await call(ctx.app, 'GET', '/v1/properties?offset=50', { key: b.apiKey })
    expect(empty.body.data).toEqual([])
    expect(empty.body.count).toBe(2)
  })

  test('the unfiltered total follows publish, unpublish, reindex and cascades', async () => {
    const b = await seedBusiness(ctx)
    const total = async () => (await call(ctx.app, 'GET', '/v1/properties?limit=1', { key: b.apiKey })).body.count
    const a = await createPublished(ctx, b.apiKey)
    const c = await createPublished(ctx, b.apiKey)
    expect(await total()).toBe(2)
    await call(ctx.app, 'POST', `/v1/properties/${a}/publish`, { key: b.apiKey })
    await call(ctx.app, 'PATCH', `/v1/properties/${a}`, { key: b.apiKey, body: { title: 'x' } })
    expect(await total()).toBe(2)
    await call(ctx.app, 'POST', `/v1/properties/${a}/unpublish`, { key: b.apiKey })
    expect(await total()).toBe(1)
    const { syncCatalogueSlice } = await import('../../shared/listings/catalogue-rebuild')
    await syncCatalogueSlice(ctx.deps.database.db, { businessId: b.id, afterId: 0, batchSize: 10 })
    expect(await total()).toBe(1)
    await ctx.deps.database.db.execute(sql`delete from properties where id = ${c}`)
    expect(await total()).toBe(0)
    const [row] = await ctx.deps.database.db.execute<{ n: number }>(sql`select count(*)::int as n from catalogue_entries where business_id = ${b.id}`)
    expect(row.n).toBe(0)
  })

  test('the total of one operation follows publish, a change of operations, unpublish and deletion', async () => {
    const b = await seedBusiness(ctx)
    // The total GET answers for `operation=op` against the rows it lists (limit 100 holds them all).
    const check = async () => {
      for (const op of ['venta', 'alquiler', 'traspaso']) {
        for (const sort of ['', '&sort=price_asc']) {
          const res = await call(ctx.app, 'GET', `/v1/properties?operation=${op}&limit=100${sort}`, { key: b.apiKey })
          expect(res.status, res.text).toBe(200)
          expect(res.body.count, `${op}${sort}`).toBe(res.body.data.length)
        }
      }
      return (await call(ctx.app, 'GET', '/v1/properties?operation=venta&limit=1', { key: b.apiKey })).body.count
    }
    const sale = await createPublished(ctx, b.apiKey, { operations: ['venta'], pricing: { sale: 100000 } })
    const both = await createPublished(ctx, b.apiKey, { operations: ['venta', 'alquiler'], pricing: { sale: 200000, rent: 900 } })
    await createPublished(ctx, b.apiKey, { operations: ['traspaso'], pricing: { transfer: 30000 } })
    await createProperty(ctx, b.apiKey, { operations: ['venta'], pricing: { sale: 1 } })
    expect(await check()).toBe(2)
    const patched = await call(ctx.app, 'PATCH', `/v1/properties/${sale}`, { key: b.apiKey, body: { operations: ['alquiler'], pricing: { rent: 700 } } })
    expect(patched.status, patched.text).toBe(200)
    expect(await check()).toBe(1)
    await call(ctx.app, 'POST', `/v1/properties/${both}/unpublish`, { key: b.apiKey })
    expect(await check()).toBe(0)
    await call(ctx.app, 'POST', `/v1/properties/${both}/publish`, { key: b.apiKey })
    expect(await check()).toBe(1)
    await ctx.deps.database.db.execute(sql`delete from properties where id = ${both}`)
    expect(await check()).toBe(0)
  })
})
