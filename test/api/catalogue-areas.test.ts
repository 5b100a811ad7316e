/**
 * The catalogue list's areas and rental kinds (api-spec §4.3): rectangles and polygons of
 * `locations` are the lines a map draws (planar latitude/longitude), answered from an index;
 * `rental_type=temporal` returns rentals of that kind only.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import fc from 'fast-check'
import { catalogueListSql } from '../../db/queries/catalogue/list'
import { catalogueQueryOf } from '../../shared/listings/catalogue-filters'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createPublished } from '../helpers/properties'

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

const at = (lat: number, lng: number) => ({ location: { city: 'Mapa', coordinates: { latitude: lat, longitude: lng }, visibility: 'public' } })
const enc = (v: unknown) => encodeURIComponent(JSON.stringify(v))
const box = (south: number, west: number, north: number, east: number) => ({
  geometry: {
    type: 'rectangle',
    coordinates: [
      { lat: south, lng: west },
      { lat: south, lng: east },
      { lat: north, lng: east },
      { lat: north, lng: west },
    ],
  },
})

describe('rectangles and polygons are planar latitude/longitude shapes', () => {
  let biz: SeededBusiness
  const points: { id: number; lat: number; lng: number }[] = []
  const ids = async (biz: SeededBusiness, query: string) => {
    const res = await call(ctx.app, 'GET', `/v1/properties?limit=1000&${query}`, { key: biz.apiKey })
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    return (res.body.data as { id: number }[]).map((p) => p.id).sort((a, b) => a - b)
  }

  beforeAll(async () => {
    biz = await seedBusiness(ctx)
    // A spread of points on half degrees, so that the generated integer-degree edges rarely touch one.
    const rand = fc.sample(fc.tuple(fc.integer({ min: -70, max: 69 }), fc.integer({ min: -179, max: 178 })), { seed: 12, numRuns: 40 })
    const coords = [[36.1, -3.0], [10.5, 0.5], [49.5, -19.5], ...rand.map(([lat, lng]) => [lat + 0.5, lng + 0.5])]
    for (const [lat, lng] of coords) points.push({ id: await createPublished(ctx, biz.apiKey, at(lat, lng)), lat, lng })
  })

  test('a Spain bounding box holds a point near its southern edge', async () => {
    const spain = points[0].id
    expect(await ids(biz, `locations=${enc([box(36, -9.5, 43.9, 3.5)])}`)).toContain(spain)
  })

  test('a 40°-wide box holds the points near its edges, whatever the vertex order', async () => {
    const inside = [points[1].id, points[2].id]
    const b = box(10, -20, 50, 20)
    expect(await ids(biz, `locations=${enc([b])}`)).toEqual(expect.arrayContaining(inside))
    const reversed = { geometry: { type: 'polygon', coordinates: [...b.geometry.coordinates].reverse() } }
    expect(await ids(biz, `locations=${enc([reversed])}`)).toEqual(expect.arrayContaining(inside))
  })

  test('property: a box holds exactly the points inside it in latitude/longitude', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: -80, max: 79 }),
        fc.integer({ min: 1, max: 150 }),
        fc.integer({ min: -180, max: 179 }),
        fc.integer({ min: 1, max: 359 }),
        async (south, height, west, width) => {
          const north = Math.min(80, south + height)
          const east = Math.min(180, west + width)
          // Edges belong to the box (ST_Intersects); (36.1, −3.0) can lie on one.
          const expected = points
            .filter((p) => p.lat >= south && p.lat <= north && p.lng >= west && p.lng <= east)
            .map((p) => p.id)
            .sort((a, b) => a - b)
          expect(await ids(biz, `locations=${enc([box(south, west, north, east)])}`)).toEqual(expected)
        },
      ),
      { numRuns: 200 },
    )
  })

  test('a polygon follows its drawn (straight lat/lng) lines', async () => {
    const other = await seedBusiness(ctx)
    const onLine = await createPublished(ctx, other.apiKey, at(60.2, 0))
    const outside = await createPublished(ctx, other.apiKey, at(61, 0))
    // A triangle whose base runs along latitude 60 from -40 to 40: a great circle between the
    // base corners would bulge north past 60.2 and leave the first point out.
    const triangle = {
      geometry: {
        type: 'polygon',
        coordinates: [
          [60, -40],
          [60, 40],
          [60.5, 0],
        ],
      },
    }
    expect(await ids(other, `locations=${enc([triangle])}`)).toEqual([onLine])
    expect(outside).toBeGreaterThan(0)
  })

  test('circles and points keep metre radii', async () => {
    const other = await seedBusiness(ctx)
    const near = await createPublished(ctx, other.apiKey, at(40, -3.004))
    await createPublished(ctx, other.apiKey, at(40, -3.02))
    // 0.004° of longitude at 40°N ≈ 341 m; 0.02° ≈ 1,704 m.
    expect(await ids(other, `locations=${enc([{ type: 'point', position: { lat: 40, lng: -3 } }])}`)).toEqual([near])
    expect(await ids(other, `locations=${enc([{ geometry: { type: 'circle', center: { lat: 40, lng: -3 }, radius: 400 } }])}`)).toEqual([near])
  })

  test('the polygon filter is answered from the GiST on the planar point, without reading the table', async () => {
    const big = await seedBusiness(ctx)
    await ctx.deps.database.db.execute(sql`
      insert into properties (business_id, operations, type, title, location, area, published_at)
      select ${big.id}, '{venta}', 'casa', 't', '{"city":"x"}', '{"total":1}', now() from generate_series(1, 20000)`)
    await ctx.deps.database.db.execute(sql`
      insert into catalogue_entries (property_id, business_id, doc, status, operations, type, bedrooms, is_featured, geog, updated_at)
      select id, business_id, '{}', 'disponible', operations, type, 0, false,
        ST_SetSRID(ST_MakePoint(-10 + random() * 20, 35 + random() * 10), 4326)::geography, now() - random() * interval '30 days'
      from properties where business_id = ${big.id}`)
    await ctx.deps.database.db.execute(sql`vacuum analyze catalogue_entries`)
    // A rectangle alone is answered by catalogue_box_page (test/db/catalogue-geo-cells.test.ts); a
    // pentagon, or a rectangle with another filter, by this statement.
    const pentagon = {
      geometry: {
        type: 'polygon',
        coordinates: [
          [40, -3.2],
          [40, -3],
          [40.1, -2.95],
          [40.2, -3],
          [40.2, -3.2],
        ],
      },
    }
    const { query } = catalogueQueryOf(big.id, { locations: JSON.stringify([pentagon]) })
    const { text, params } = catalogueListSql(query)
    // Plans follow statistics: on a small, fresh table a sequential scan is cheaper, so scans are
    // priced out (as in leads-list.test.ts) and the plan shows whether the index serves this shape.
    const plan = await ctx.deps.database.sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`
      return (await tx.unsafe<{ 'QUERY PLAN': string }[]>(`explain ${text}`, params as never[])).map((r) => r['QUERY PLAN']).join('\n')
    })
    if (process.env.SHOW_PLAN) console.log(plan)
    expect(plan).toContain('Index Only Scan using catalogue_business_pt_gist')
    expect(plan).not.toContain('Seq Scan')
  })
})

describe('rental_type filters rentals only', () => {
  test('temporal: rentals with temporal_renting; a sale-only listing never matches', async () => {
    const biz = await seedBusiness(ctx)
    const saleOnly = await createPublished(ctx, biz.apiKey, { characteristics: { temporal_renting: true } })
    const temporal = await createPublished(ctx, biz.apiKey, { operations: ['alquiler'], pricing: { rent: 900 }, characteristics: { temporal_renting: true } })
    const both = await createPublished(ctx, biz.apiKey, {
      operations: ['venta', 'alquiler'],
      pricing: { sale: 1, rent: 2 },
      characteristics: { temporal_renting: true },
    })
    const annual = await createPublished(ctx, biz.apiKey, { operations: ['alquiler'], pricing: { rent: 700 } })
    const list = async (q: string) =>
      ((await call(ctx.app, 'GET', `/v1/properties?${q}`, { key: biz.apiKey })).body.data as { id: number }[]).map((p) => p.id).sort((a, b) => a - b)
    expect(await list('rental_type=temporal')).toEqual([temporal, both].sort((a, b) => a - b))
    expect(await list('rental_type=anual')).toEqual([annual])
    expect(saleOnly).toBeGreaterThan(0)
  })
})
