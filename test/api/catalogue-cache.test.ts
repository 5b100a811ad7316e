/**
 * The in-process cache of catalogue list pages (shared/listings/catalogue-cache.ts): a repeated
 * list is served from it, and every change of the business's catalogue, by whatever path, is
 * seen by the next list (read-your-writes, contract §3.3). Writers outside the API are played by
 * SQL: the generation moves in the triggers of catalogue_entries, not in the API's code.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createPublished } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
let other: SeededBusiness
const ids: number[] = []

beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  other = await seedBusiness(ctx)
  for (const sale of [100000, 200000, 300000]) ids.push(await createPublished(ctx, biz.apiKey, { operations: ['venta'], pricing: { sale } }))
  await createPublished(ctx, other.apiKey)
})
afterAll(() => ctx.close())

const cache = () => ctx.deps.catalogueCache!
async function list(key: string, query = 'operation=venta&min_price=150000') {
  const res = await call(ctx.app, 'GET', `/v1/properties?${query}`, { key })
  expect(res.status, res.text).toBe(200)
  return res.body
}
/** Hits and misses of the cache during `run`. */
async function counted<T>(run: () => Promise<T>): Promise<{ result: T; hits: number; misses: number }> {
  const [h, m] = [cache().hits, cache().misses]
  const result = await run()
  return { result, hits: cache().hits - h, misses: cache().misses - m }
}

describe('catalogue page cache', () => {
  test('is on by default; a repeated list is answered from it, identically', async () => {
    expect(ctx.deps.catalogueCache).toBeDefined()
    const first = await counted(() => list(biz.apiKey))
    expect(first.misses).toBe(1)
    const again = await counted(() => list(biz.apiKey))
    expect(again).toMatchObject({ hits: 1, misses: 0 })
    expect(again.result).toEqual(first.result)
    expect(again.result.count).toBe(2)
  })

  test('a change through the API is seen by the next list', async () => {
    await list(biz.apiKey)
    const res = await call(ctx.app, 'PATCH', `/v1/properties/${ids[0]}`, { key: biz.apiKey, body: { pricing: { sale: 160000 } } })
    expect(res.status, res.text).toBe(200)
    const after = await counted(() => list(biz.apiKey))
    expect(after.misses).toBe(1)
    expect(after.result.count).toBe(3)
    const unpublished = await call(ctx.app, 'POST', `/v1/properties/${ids[2]}/unpublish`, { key: biz.apiKey })
    expect(unpublished.status).toBe(200)
    expect((await list(biz.apiKey)).count).toBe(2)
  })

  test('a change by any other writer (SQL here: a worker, the CLI, a cascade) is seen too', async () => {
    const before = await list(biz.apiKey)
    await ctx.deps.database.db.execute(
      sql`update catalogue_entries set doc = json_build_object('id', property_id, 'title', 'rewritten') where property_id = ${ids[1]}`,
    )
    const rewritten = await list(biz.apiKey)
    expect(rewritten.data.map((p: any) => p.title)).toContain('rewritten')
    expect(rewritten.count).toBe(before.count)
    await ctx.deps.database.db.execute(sql`delete from properties where id = ${ids[1]}`)
    expect((await list(biz.apiKey)).count).toBe(before.count - 1)
  })

  test("another business's change leaves this business's pages cached", async () => {
    await list(biz.apiKey, 'limit=5')
    await createPublished(ctx, other.apiKey)
    const again = await counted(() => list(biz.apiKey, 'limit=5'))
    expect(again).toMatchObject({ hits: 1, misses: 0 })
  })

  test('the counts show on /metrics', async () => {
    const res = await call(ctx.app, 'GET', '/metrics')
    expect(res.text).toMatch(/catalogue_cache_requests_total\{result="hit"\} [1-9]/)
    expect(res.text).toMatch(/catalogue_cache_bytes [1-9]/)
  })

  test('pages of a business whose documents are kept take them from the cache, and answer as without a cache', async () => {
    const b = await seedBusiness(ctx)
    const cities = [
      ['Madrid', 40.42, -3.7],
      ['Valencia', 39.47, -0.38],
      ['Sevilla', 37.39, -5.98],
    ] as const
    for (let i = 0; i < 24; i++) {
      const [city, lat, lng] = cities[i % 3]
      await createPublished(ctx, b.apiKey, {
        title: `Piso ${i} ${i % 2 ? 'con piscina' : 'con terraza'}`,
        operations: i % 4 ? ['venta'] : ['alquiler'],
        pricing: i % 4 ? { sale: 100000 + i * 10000 } : { rent: 500 + i * 10 },
        bedrooms: i % 5,
        location: { city, address: 'Calle Mayor 1', postal_code: '28001', coordinates: { latitude: lat + i / 1000, longitude: lng }, visibility: 'public' },
      })
    }
    const queries = [
      'limit=5',
      'limit=5&offset=5',
      'limit=7&offset=10',
      'operation=venta&limit=4&sort=price_desc',
      'operation=venta&min_price=150000&limit=3',
      'city=Valencia&limit=3',
      'q=piscina&limit=4',
      'q=terraza&limit=4&offset=4',
      'min_bedrooms=3&limit=5',
      `locations=${encodeURIComponent(JSON.stringify([{ geometry: { type: 'circle', center: { lat: 40.42, lng: -3.7 }, radius: 5000 } }]))}&limit=3`,
      'offset=50',
    ]
    const off = await createTestContext({ CATALOGUE_CACHE_MB: '0' })
    try {
      const same = async () => {
        for (const query of queries)
          expect(await list(b.apiKey, query), query).toEqual((await call(off.app, 'GET', `/v1/properties?${query}`, { key: b.apiKey })).body)
      }
      const before = cache().docHits
      await same()
      expect(cache().docHits).toBeGreaterThan(before)
      await same()
      // A change: every kept document of the business is left behind with the old generation.
      const [first] = (await list(b.apiKey, 'limit=1')).data
      const patched = await call(ctx.app, 'PATCH', `/v1/properties/${first.id}`, { key: b.apiKey, body: { title: 'Ático reformado con piscina' } })
      expect(patched.status, patched.text).toBe(200)
      await same()
      expect((await list(b.apiKey, 'q=atico&limit=4')).data.map((p: any) => p.title)).toContain('Ático reformado con piscina')
    } finally {
      await off.close()
    }
  })

  test('CATALOGUE_CACHE_MB=0 turns it off', async () => {
    const off = await createTestContext({ CATALOGUE_CACHE_MB: '0' })
    try {
      expect(off.deps.catalogueCache).toBeUndefined()
      const res = await call(off.app, 'GET', '/v1/properties', { key: biz.apiKey })
      expect(res.status).toBe(200)
    } finally {
      await off.close()
    }
  })
})
