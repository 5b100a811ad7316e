import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createProperty, createPublished } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
const id: Record<string, number> = {}

const loc = (city: string, lat: number, lng: number, visibility = 'public') => ({
  city,
  address: 'Calle Mayor 1',
  postal_code: '28001',
  coordinates: { latitude: lat, longitude: lng },
  visibility,
})

beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  // Madrid centre ≈ 40.4168,-3.7038; Valencia ≈ 39.4699,-0.3763.
  id.saleMadrid = await createPublished(ctx, biz.apiKey, {
    operations: ['venta'],
    pricing: { sale: 300000 },
    location: loc('Madrid', 40.4168, -3.7038),
    bedrooms: 3,
    is_featured: true,
  })
  id.rentMadrid = await createPublished(ctx, biz.apiKey, {
    operations: ['alquiler'],
    pricing: { rent: 1500 },
    location: loc('madrid', 40.425, -3.7),
    bedrooms: 1,
    subtype: 'piso',
  })
  id.temporal = await createPublished(ctx, biz.apiKey, {
    operations: ['alquiler'],
    pricing: { rent: 800 },
    location: loc('Valencia', 39.4699, -0.3763),
    characteristics: { temporal_renting: true },
    status: 'reservada',
  })
  id.holiday = await createPublished(ctx, biz.apiKey, {
    operations: ['alquiler'],
    pricing: { rent: 2000 },
    location: loc('Valencia', 39.47, -0.38),
    characteristics: { holiday_renting: true },
  })
  id.both = await createPublished(ctx, biz.apiKey, {
    operations: ['venta', 'alquiler'],
    pricing: { sale: 100000, rent: 600 },
    location: loc('Sevilla', 37.3891, -5.9845),
    type: 'casa',
    subtype: 'chalet',
    bedrooms: 5,
  })
  id.transfer = await createPublished(ctx, biz.apiKey, {
    operations: ['traspaso'],
    pricing: { transfer: 50000 },
    location: loc('Sevilla', 37.39, -5.98),
    type: 'local',
    subtype: 'local_comercial',
    bedrooms: 0,
  })
  id.approx = await createPublished(ctx, biz.apiKey, {
    operations: ['venta'],
    pricing: { sale: 200000 },
    location: loc('Bilbao', 43.2634, -2.9349, 'approximate'),
  })
  id.hidden = await createPublished(ctx, biz.apiKey, { operations: ['venta'], pricing: { sale: 400000 }, location: loc('Bilbao', 43.263, -2.935, 'hidden') })
  id.draft = await createProperty(ctx, biz.apiKey, { location: loc('Madrid', 40.4168, -3.7038) })
})
afterAll(() => ctx.close())

async function list(query: string) {
  const res = await call(ctx.app, 'GET', `/v1/properties${query ? `?${query}` : ''}`, { key: biz.apiKey })
  expect(res.status, res.text).toBe(200)
  return res.body
}
const ids = async (query: string) => (await list(query)).data.map((p: any) => p.id).sort((a: number, b: number) => a - b)
const sorted = (...xs: number[]) => [...xs].sort((a, b) => a - b)
const enc = (v: unknown) => encodeURIComponent(JSON.stringify(v))

describe('GET /properties filters (api-spec §4.3)', () => {
  test('no filter: every published property, drafts excluded, most recently updated first', async () => {
    const body = await list('')
    expect(body.count).toBe(8)
    expect(body.data.map((p: any) => p.id)).not.toContain(id.draft)
    const updated = body.data.map((p: any) => p.updated_at)
    expect([...updated].sort().reverse()).toEqual(updated)
  })

  test('status exact; unknown status → empty page', async () => {
    expect(await ids('status=reservada')).toEqual([id.temporal])
    const none = await list('status=borrada')
    expect(none.data).toEqual([])
    expect(none.count).toBe(0)
  })

  test('operation: case-insensitive partial; several operations match each', async () => {
    expect(await ids('operation=VENTA')).toEqual(sorted(id.saleMadrid, id.both, id.approx, id.hidden))
    expect(await ids('operation=alq')).toEqual(sorted(id.rentMadrid, id.temporal, id.holiday, id.both))
    expect(await ids('operation=traspaso')).toEqual([id.transfer])
    expect(await ids('operation=permuta')).toEqual([])
  })

  test('price filters use the price the operation selects', async () => {
    expect(await ids('min_price=250000')).toEqual(sorted(id.saleMadrid, id.hidden))
    expect(await ids('operation=alquiler&min_price=700&max_price=1500')).toEqual(sorted(id.rentMadrid, id.temporal))
    expect(await ids('operation=traspaso&max_price=50000')).toEqual([id.transfer])
    expect(await ids('max_price=100000')).toEqual([id.both])
    expect(await ids('min_price=100000&max_price=100000')).toEqual([id.both])
  })

  test('rental_type temporal and anual', async () => {
    expect(await ids('rental_type=temporal')).toEqual([id.temporal])
    expect(await ids('rental_type=anual')).toEqual(sorted(id.rentMadrid, id.both))
  })

  test('type, subtype key (not label), city case-insensitive exact', async () => {
    expect(await ids('type=casa')).toEqual([id.both])
    expect(await ids('subtype=local_comercial')).toEqual([id.transfer])
    expect(await ids('subtype=Local%20comercial')).toEqual([])
    expect(await ids('subtype=nonexistent')).toEqual([])
    expect(await ids('city=MADRID')).toEqual(sorted(id.saleMadrid, id.rentMadrid))
    expect(await ids('city=Madr')).toEqual([])
  })

  test('min_bedrooms and is_featured', async () => {
    expect(await ids('min_bedrooms=4')).toEqual([id.both])
    expect(await ids('min_bedrooms=3')).toEqual(sorted(id.saleMadrid, id.temporal, id.holiday, id.both, id.approx, id.hidden))
    expect(await ids('is_featured=true')).toEqual([id.saleMadrid])
    expect((await ids('is_featured=false')).length).toBe(7)
  })

  test('filters combine with AND and are echoed; unsent filters are null', async () => {
    const body = await list('operation=venta&city=madrid&min_bedrooms=2&unknown=1&Limit=5')
    expect(body.data.map((p: any) => p.id)).toEqual([id.saleMadrid])
    expect(body.filters).toEqual({
      status: null,
      operation: 'venta',
      rental_type: null,
      type: null,
      subtype: null,
      city: 'madrid',
      locations: null,
      min_price: null,
      max_price: null,
      min_bedrooms: 2,
      is_featured: null,
      sort: null,
      q: null,
    })
    expect(body.limit).toBe(100)
  })

  test('locations: circle, polygon with pairs and lon, point default 500 m, rectangle', async () => {
    const circle = { geometry: { type: 'circle', center: { lat: 40.4168, lng: -3.7038 }, radius: 1000 } }
    expect(await ids(`locations=${enc([circle])}`)).toEqual(sorted(id.saleMadrid, id.rentMadrid))
    const polygon = { geometry: { type: 'polygon', coordinates: [[37.3, -6.1], { lat: 37.3, lon: -5.9 }, [37.5, -5.9], [37.5, -6.1]] } }
    expect(await ids(`locations=${enc([polygon])}`)).toEqual(sorted(id.both, id.transfer))
    const point = { type: 'point', position: { lat: 40.4168, lng: -3.7038 } }
    expect(await ids(`locations=${enc([point])}`)).toEqual([id.saleMadrid])
    const rectangle = {
      geometry: {
        type: 'rectangle',
        coordinates: [
          { lat: 39.4, lng: -0.4 },
          { lat: 39.4, lng: -0.3 },
          { lat: 39.5, lng: -0.3 },
          { lat: 39.5, lng: -0.4 },
        ],
      },
    }
    expect(await ids(`locations=${enc([rectangle, circle])}`)).toEqual(sorted(id.temporal, id.holiday, id.saleMadrid, id.rentMadrid))
  })

  test('locations: approximate matched by the rounded point, hidden never', async () => {
    // Exact 43.2634,-2.9349 → rounded 43.26,-2.93 (≈ 360 m away). A 100 m circle on the exact point misses it; on the rounded point it hits.
    expect(await ids(`locations=${enc([{ type: 'marker', position: { lat: 43.2634, lng: -2.9349 }, radius: 100 }])}`)).toEqual([])
    expect(await ids(`locations=${enc([{ type: 'marker', position: { lat: 43.26, lng: -2.93 }, radius: 100 }])}`)).toEqual([id.approx])
    const wide = await list(`locations=${enc([{ geometry: { type: 'circle', center: { lat: 43.263, lng: -2.935 }, radius: 5000 } }])}`)
    expect(wide.data.map((p: any) => p.id)).toEqual([id.approx])
    const approx = wide.data[0]
    expect([approx.lat, approx.lon]).toEqual([43.26, -2.93])
  })

  test('locations: unrecognised elements ignored and not echoed; invalid JSON ignored as a whole', async () => {
    const body = await list(`locations=${enc([{ geometry: { type: 'hexagon' } }, { type: 'point', position: [40.4168, -3.7038] }])}`)
    expect(body.data.map((p: any) => p.id)).toEqual([id.saleMadrid])
    expect(body.filters.locations).toEqual([{ type: 'point', position: { lat: 40.4168, lng: -3.7038 }, radius: 500 }])
    const bad = await list('locations=%7Bnot-json')
    expect(bad.count).toBe(8)
    expect(bad.filters.locations).toBeNull()
    const none = await list(`locations=${enc([{ geometry: { type: 'hexagon' } }])}`)
    expect(none.count).toBe(8)
    expect(none.filters.locations).toEqual([])
  })
})

describe('sorting and pagination', () => {
  test('price_asc / price_desc: properties without the price go last', async () => {
    const asc = (await list('sort=price_asc')).data.map((p: any) => p.id)
    expect(asc.slice(0, 4)).toEqual([id.both, id.approx, id.saleMadrid, id.hidden])
    const desc = (await list('sort=price_desc')).data.map((p: any) => p.id)
    expect(desc.slice(0, 4)).toEqual([id.hidden, id.saleMadrid, id.approx, id.both])
    // The four without a sale price come last, ties on id descending.
    expect(desc.slice(4)).toEqual([id.transfer, id.holiday, id.temporal, id.rentMadrid])
    expect(asc.slice(4)).toEqual([id.transfer, id.holiday, id.temporal, id.rentMadrid])
  })

  test('operation selects the sort price', async () => {
    const r = (await list('operation=alquiler&sort=price_desc')).data.map((p: any) => p.id)
    expect(r).toEqual([id.holiday, id.rentMadrid, id.temporal, id.both])
  })

  test('ties break on id descending, so offset pages never repeat or skip', async () => {
    const b = await seedBusiness(ctx)
    const made: number[] = []
    for (let i = 0; i < 7; i++) made.push(await createPublished(ctx, b.apiKey, { pricing: { sale: 1000 } }))
    await ctx.deps.database.db.execute(sql`update catalogue_entries set updated_at = '2026-01-01T00:00:00Z' where business_id = ${b.id}`)
    const expected = [...made].sort((x, y) => y - x)
    for (const q of ['', 'sort=price_asc', 'sort=price_desc']) {
      const seen: number[] = []
      for (let offset = 0; offset < 7; offset += 3) {
        const res = await call(ctx.app, 'GET', `/v1/properties?limit=3&offset=${offset}&${q}`, { key: b.apiKey })
        expect(res.body.count).toBe(7)
        seen.push(...res.body.data.map((p: any) => p.id))
      }
      expect(seen).toEqual(expected)
    }
  })

  test('limit and offset bounds', async () => {
    expect((await list('limit=1')).data.length).toBe(1)
    expect((await list('limit=1000')).limit).toBe(1000)
    const past = await list('offset=100')
    expect(past.data).toEqual([])
    expect(past.count).toBe(8)
    expect(past.offset).toBe(100)
  })

  const invalid = [
    'limit=0',
    'limit=1001',
    'limit=abc',
    'limit=1.5',
    'offset=-1',
    'offset=x',
    'min_price=-1',
    'min_price=abc',
    'max_price=-5',
    'min_bedrooms=-1',
    'min_bedrooms=1.5',
    'is_featured=maybe',
    'sort=newest',
    'rental_type=weekly',
    'type=castillo',
    'type=Casa',
  ]
  for (const q of invalid) {
    test(`${q} → 422`, async () => {
      const res = await call(ctx.app, 'GET', `/v1/properties?${q}`, { key: biz.apiKey })
      expect(res.status, res.text).toBe(422)
      expect(res.body.errors[0].loc[0]).toBe('query')
      expect(res.body.errors[0].loc[1]).toBe(q.split('=')[0])
    })
  }
})

describe('images in the public representation', () => {
  test('only ready images with a public URL, in position order, no original key', async () => {
    const pid = await createPublished(ctx, biz.apiKey)
    const db = ctx.deps.database.db
    await db.execute(sql`insert into property_images (business_id, property_id, original_key, public_url, position, is_primary, state)
      values (${biz.id}, ${pid}, 'originals/secret-b', 'https://cdn.example/b.jpg', 2, false, 'ready'),
             (${biz.id}, ${pid}, 'originals/secret-a', 'https://cdn.example/a.jpg', 1, true, 'ready'),
             (${biz.id}, ${pid}, 'originals/secret-c', null, 3, false, 'processing')`)
    const { syncCatalogueEntry } = await import('../../shared/listings/catalogue-rebuild')
    await syncCatalogueEntry(db, pid)
    const res = await call(ctx.app, 'GET', `/v1/properties/${pid}`, { key: biz.apiKey })
    expect(res.body.data.images.map((i: any) => [i.url, i.order, i.is_primary])).toEqual([
      ['https://cdn.example/a.jpg', 1, true],
      ['https://cdn.example/b.jpg', 2, false],
    ])
    expect(res.text).not.toContain('originals/')
    // An update keeps the images.
    await call(ctx.app, 'PATCH', `/v1/properties/${pid}`, { key: biz.apiKey, body: { title: 'Con fotos' } })
    expect((await call(ctx.app, 'GET', `/v1/properties/${pid}`, { key: biz.apiKey })).body.data.images.length).toBe(2)
    await call(ctx.app, 'POST', `/v1/properties/${pid}/unpublish`, { key: biz.apiKey })
  })
})
