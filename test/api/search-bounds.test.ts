/**
 * The bounds of a search over HTTP (contract §11, §15): `count` exact up to 1,000 then 1,000 with
 * `count_relation: "gte"`, `offset + limit` ≤ 1,000 with `q` (a 422 on `offset`), relevance over
 * the 1,000 most recently updated matches, `sort` over the first 1,000 in its order, and nothing
 * bounded without `q`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'

let ctx: TestContext
let biz: SeededBusiness
/** Listing i (1 = oldest, 1,200 = newest) → its property id. */
const idOf: number[] = []
const ROWS = 1200

beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  const db = ctx.deps.database.db
  await db.execute(sql`
    insert into properties (business_id, operations, type, title, location, area, published_at)
    select ${biz.id}, '{venta}', 'casa', 'p' || i, '{"city":"x"}', '{"total":1}', now() from generate_series(1, ${ROWS}::int) i`)
  const inserted = await ctx.deps.database.sql<{ id: number; i: number }[]>`select id, substr(title, 2)::int as i from properties where business_id = ${biz.id}`
  for (const r of inserted) idOf[r.i] = r.id
  // Every listing says "palomar" in its description; the 50 oldest and ten recent ones in their
  // title too. "albahaca" is in exactly 1,000 listings, "romero" in 1,001. Listing i is i seconds
  // newer than listing 0 and costs i thousand.
  await db.execute(sql`
    insert into catalogue_entries (property_id, business_id, doc, status, operations, type, bedrooms, is_featured, price_sale, updated_at)
    select p.id, p.business_id,
      jsonb_build_object('id', p.id,
        'title', case when i <= 50 or i between 1101 and 1110 then 'Casa con palomar' else 'Casa ' || i end,
        'description', 'Con palomar' || case when i <= 1000 then ' y albahaca' else '' end || case when i <= 1001 then ' y romero' else '' end,
        'city', 'Murcia'),
      'disponible', p.operations, p.type, 0, false, i * 1000, timestamptz '2026-01-01' + i * interval '1 second'
    from properties p cross join lateral (select substr(p.title, 2)::int as i) n where p.business_id = ${biz.id}`)
})
afterAll(() => ctx.close())

async function list(query: string) {
  const res = await call(ctx.app, 'GET', `/v1/properties?${query}`, { key: biz.apiKey })
  expect(res.status, res.text).toBe(200)
  return res.body as { data: { id: number }[]; count: number; count_relation: string; limit: number; offset: number }
}
const ids = (page: { data: { id: number }[] }) => page.data.map((p) => p.id)
const range = (from: number, to: number, step = 1) => Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, k) => idOf[from + k * step])

describe('count with q: exact up to 1,000, then 1,000 and "gte"', () => {
  test('no match, one match and exactly 1,000 matches are exact ("eq")', async () => {
    expect(await list('q=tomillo')).toMatchObject({ count: 0, count_relation: 'eq', data: [] })
    expect(await list(`q=${encodeURIComponent('albahaca -romero')}`)).toMatchObject({ count: 0, count_relation: 'eq' })
    expect(await list('q=albahaca&limit=1')).toMatchObject({ count: 1000, count_relation: 'eq' })
  })

  test('1,001 and 1,200 matches answer 1,000 with "gte"', async () => {
    expect(await list('q=romero&limit=1')).toMatchObject({ count: 1000, count_relation: 'gte' })
    expect(await list('q=palomar&limit=1')).toMatchObject({ count: 1000, count_relation: 'gte' })
    expect(await list('q=palomar&limit=1&sort=price_asc')).toMatchObject({ count: 1000, count_relation: 'gte' })
  })

  test('the bound counts the matches of every filter: fewer than 1,000 with a price cap are exact', async () => {
    expect(await list('q=palomar&max_price=300000&limit=1')).toMatchObject({ count: 300, count_relation: 'eq' })
  })

  test('without q the count stays exact past 1,000 and says "eq"', async () => {
    expect(await list('limit=1')).toMatchObject({ count: ROWS, count_relation: 'eq' })
    expect(await list('operation=venta&limit=1')).toMatchObject({ count: ROWS, count_relation: 'eq' })
  })
})

describe('offset + limit with q', () => {
  test('past 1,000 is a 422 problem+json on offset', async () => {
    for (const query of [
      'q=palomar&offset=901&limit=100',
      'q=palomar&offset=1000&limit=1',
      'q=palomar&offset=950',
      'q=tomillo&offset=1000&limit=1',
      'q=palomar&sort=price_asc&offset=1&limit=1000',
    ]) {
      const res = await call(ctx.app, 'GET', `/v1/properties?${query}`, { key: biz.apiKey })
      expect(res.status, `${query}: ${res.text}`).toBe(422)
      expect(res.headers.get('content-type')).toContain('application/problem+json')
      expect(res.body.errors.map((e: { loc: string[] }) => e.loc)).toEqual([['query', 'offset']])
    }
  })

  test('up to 1,000 is answered: the last page of the bound holds its listings', async () => {
    const last = await list('q=palomar&offset=999&limit=1')
    expect(last.data).toHaveLength(1)
    expect(await list('q=palomar&offset=0&limit=1000')).toMatchObject({ offset: 0, limit: 1000 })
  })

  test('without q any offset is answered', async () => {
    expect(await list('offset=5000&limit=1000')).toMatchObject({ count: ROWS, count_relation: 'eq', data: [] })
    expect(ids(await list('offset=1199&limit=1000'))).toEqual([idOf[1]])
  })
})

describe('which 1,000 matches are listed', () => {
  test('without sort: the 1,000 most recently updated matches, by relevance, ties by updated_at then id', async () => {
    const all = ids(await list('q=palomar&limit=1000'))
    // Titles first (ten of the newest say it in their title), newest first among equals; the 50
    // oldest, also titled, are past the 1,000 most recent and never listed.
    expect(all.slice(0, 10)).toEqual(range(1101, 1110).reverse())
    expect(all.slice(10, 15)).toEqual([idOf[1200], idOf[1199], idOf[1198], idOf[1197], idOf[1196]])
    expect(new Set(all)).toEqual(new Set(range(201, 1200)))
    expect(ids(await list('q=palomar&offset=990&limit=10'))).toEqual(range(201, 210).reverse())
  })

  test('with sort: the first 1,000 matches in that order', async () => {
    expect(ids(await list('q=palomar&sort=price_asc&offset=995&limit=5'))).toEqual(range(996, 1000))
    expect(ids(await list('q=palomar&sort=price_desc&limit=3'))).toEqual([idOf[1200], idOf[1199], idOf[1198]])
    expect(ids(await list('q=palomar&sort=price_desc&offset=997&limit=3'))).toEqual([idOf[203], idOf[202], idOf[201]])
  })

  test('an operation or other filter narrows the matches before the bound', async () => {
    expect(ids(await list('q=palomar&operation=venta&min_price=1150000&limit=100'))).toEqual(range(1150, 1200).reverse())
  })
})
