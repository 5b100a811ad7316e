/**
 * An operation's price-range total read from catalogue_price_counts (migration 0019,
 * db/queries/catalogue/counts.ts priceRangeCount) must equal counting the rows, for any range, including
 * prices on and next to bucket edges, and after inserts, price and operation changes and deletes.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import postgres from 'postgres'
import { catalogueListSql, queryCataloguePage, listCatalogueIds, listCatalogueRows } from '../../db/queries/catalogue/list'
import { catalogueQueryOf } from '../../shared/listings/catalogue-filters'

const sql = postgres(process.env.DATABASE_URL!, { max: 2, onnotice: () => {} })
let businessId: number
afterAll(async () => {
  await sql`delete from businesses where id = ${businessId}`
  await sql.end({ timeout: 1 })
})

function prng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 2 ** 32
  }
}
const r = prng(41)
/** Prices around bucket edges (10,000 for sales, 50 for rents, 5,000 for transfers) and anywhere. */
const priceNear = (width: number) => {
  const k = Math.floor(r() * 120)
  const choice = r()
  if (choice < 0.2) return k * width
  if (choice < 0.3) return k * width - 1e-9 * width
  if (choice < 0.4) return k * width + 1e-7
  if (choice < 0.45) return k * width * (1 - Number.EPSILON)
  if (choice < 0.5) return k * width * (1 + Number.EPSILON)
  return Math.round(r() * 120 * width * 100) / 100
}

beforeAll(async () => {
  ;[{ id: businessId }] = await sql`insert into businesses (name) values ('price-counts') returning id`
  await sql`
    insert into properties (business_id, operations, type, title, location, area, published_at)
    select ${businessId}, '{venta}', 'casa', 't', '{"city":"x"}', '{"total":1}', now() from generate_series(1, 3000)`
  const ids = (await sql<{ id: number }[]>`select id from properties where business_id = ${businessId} order by id`).map((row) => row.id)
  const ops = ids.map((_, i) => (['{venta}', '{alquiler}', '{traspaso}', '{venta,alquiler}'] as const)[i % 4])
  await sql`
    insert into catalogue_entries (property_id, business_id, doc, status, operations, type, bedrooms, is_featured,
      price_sale, price_rent, price_transfer, updated_at)
    select id, ${businessId}, '{}', 'disponible', ops::text[], 'casa', 0, false, s, rt, t, timestamptz '2026-01-01' + (id % 89) * interval '1 minute'
    from unnest(${ids}::int[], ${ops}::text[], ${ids.map(() => priceNear(10000))}::float8[], ${ids.map(() => priceNear(50))}::float8[],
      ${ids.map(() => priceNear(5000))}::float8[]) as u(id, ops, s, rt, t)`
})

const WIDTH = { venta: 10000, alquiler: 50, traspaso: 5000 } as const

async function checkRanges(rounds: number) {
  for (let i = 0; i < rounds; i++) {
    const op = (['venta', 'alquiler', 'traspaso'] as const)[i % 3]
    const w = WIDTH[op]
    const a = priceNear(w)
    const b = r() < 0.7 ? a + r() * 60 * w : priceNear(w)
    const params =
      r() < 0.15
        ? { operation: op, min_price: a }
        : r() < 0.15
          ? { operation: op, max_price: b }
          : { operation: op, min_price: Math.min(a, b), max_price: Math.max(a, b) }
    // Pages at any offset, in the default order: wide ranges walk the default order's index,
    // narrow ones read the price index (catalogue_price_range_page, migration 0024).
    const page = { limit: [1, 20, 100][i % 3], offset: r() < 0.6 ? 0 : Math.floor(r() * 300) }
    const { query } = catalogueQueryOf(businessId, { ...params, ...page })
    const column = op === 'venta' ? 'price_sale' : op === 'alquiler' ? 'price_rent' : 'price_transfer'
    const rows = await sql.unsafe<{ id: number }[]>(
      `select property_id as id from catalogue_entries where business_id = $1 and operations @> $2::text[] and ${column} >= $3 and ${column} <= $4
       order by updated_at desc, property_id desc`,
      [businessId, `{${op}}`, params.min_price ?? -1e308, params.max_price ?? 1e308],
    )
    const want = { count: rows.length, ids: rows.slice(page.offset, page.offset + page.limit).map((row) => row.id) }
    const label = JSON.stringify({ ...params, ...page })
    expect((await queryCataloguePage(sql, query)).count, label).toBe(want.count)
    const ids = await listCatalogueIds(sql, query)
    expect({ count: ids.count, ids: ids.ids }, label).toEqual(want)
    const docs = await listCatalogueRows(sql, query)
    expect({ count: docs.count, ids: docs.docs.map(([id]) => id) }, label).toEqual(want)
  }
}

test('a wide range of one operation is counted from the buckets, and that count is exact', async () => {
  const { query } = catalogueQueryOf(businessId, { operation: 'venta', min_price: 100000, max_price: 900000 })
  expect(catalogueListSql(query).text).toContain('catalogue_price_range_page(')
  const sorted = catalogueQueryOf(businessId, { operation: 'venta', min_price: 100000, max_price: 900000, sort: 'price_asc' }).query
  expect(catalogueListSql(sorted).text).toContain('catalogue_price_range_count(')
  await checkRanges(300)
})

test('the largest offset the API takes is an empty page with the total', async () => {
  // limit + offset overflows a PostgreSQL integer: catalogue_price_range_page must not add them as one.
  const { query } = catalogueQueryOf(businessId, { operation: 'venta', min_price: 0, max_price: 2e6, limit: 1000, offset: 2_147_483_647 })
  const [{ n }] = await sql<
    { n: number }[]
  >`select count(*)::int as n from catalogue_entries where business_id = ${businessId} and operations @> '{venta}' and price_sale between 0 and 2e6`
  expect(await listCatalogueIds(sql, query)).toMatchObject({ count: n, ids: [] })
})

test('the buckets follow inserts, changes of price and of operations, and deletes', async () => {
  await sql`update catalogue_entries set price_sale = price_sale + 12345.5 where business_id = ${businessId} and property_id % 3 = 0`
  await sql`update catalogue_entries set operations = '{traspaso}', price_transfer = 77777 where business_id = ${businessId} and property_id % 7 = 0`
  await sql`delete from catalogue_entries where business_id = ${businessId} and property_id % 5 = 0`
  await checkRanges(150)
  const [{ bad }] = await sql<{ bad: number }[]>`
    select count(*)::int as bad from (
      select op, bucket, n from catalogue_price_counts where business_id = ${businessId} and n <> 0
      except
      select v.op, catalogue_price_bucket(v.price, catalogue_price_width(v.op)), count(*)
      from catalogue_entries r cross join lateral (values ('venta', r.price_sale), ('alquiler', r.price_rent), ('traspaso', r.price_transfer)) v(op, price)
      where r.business_id = ${businessId} and r.operations @> array[v.op] and v.price is not null group by 1, 2) x`
  expect(bad).toBe(0)
})

/** The float just above or below `x` (one unit in the last place). */
function nextFloat(x: number, up: boolean): number {
  const f = new Float64Array([x])
  const i = new BigInt64Array(f.buffer)
  if (x === 0) return up ? Number.MIN_VALUE : -Number.MIN_VALUE
  i[0] += x > 0 === up ? 1n : -1n
  return f[0]
}

test('large prices, one unit in the last place either side of a bucket edge, bounds up to 1e15: still exact', async () => {
  // One bucket per edge (migration 0022) rests on the bucket never decreasing as the price grows
  // and on bucket · width being exact below 2^53; these prices sit where rounding could break either.
  const [{ id: other }] = await sql<{ id: number }[]>`insert into businesses (name) values ('price-counts-large') returning id`
  try {
    const edges: number[] = []
    for (let i = 0; i < 400; i++) {
      const w = (['venta', 'alquiler', 'traspaso'] as const).map((op) => WIDTH[op])[i % 3]
      const k = Math.floor(10 ** (3 + r() * (15 - Math.log10(w) - 3)))
      const edge = k * w
      edges.push(edge, nextFloat(edge, true), nextFloat(edge, false), edge - 0.5, edge + 0.5)
    }
    const ids = (
      await sql<{ id: number }[]>`
      insert into properties (business_id, operations, type, title, location, area, published_at)
      select ${other}, '{venta,alquiler,traspaso}', 'casa', 't', '{"city":"x"}', '{"total":1}', now() from generate_series(1, ${edges.length}) returning id`
    ).map((row) => row.id)
    await sql`
      insert into catalogue_entries (property_id, business_id, doc, status, operations, type, bedrooms, is_featured,
        price_sale, price_rent, price_transfer, updated_at)
      select id, ${other}, '{}', 'disponible', '{venta,alquiler,traspaso}', 'casa', 0, false, p, p, p, now()
      from unnest(${ids}::int[], ${edges}::float8[]) as u(id, p)`
    for (let i = 0; i < 300; i++) {
      const op = (['venta', 'alquiler', 'traspaso'] as const)[i % 3]
      const [a, b] = [edges[Math.floor(r() * edges.length)], edges[Math.floor(r() * edges.length)]]
      const [min, max] = [Math.min(a, b), Math.max(a, b)]
      const params =
        i % 5 === 0 ? { operation: op, min_price: min } : i % 5 === 1 ? { operation: op, max_price: max } : { operation: op, min_price: min, max_price: max }
      const { query } = catalogueQueryOf(other, params)
      const column = op === 'venta' ? 'price_sale' : op === 'alquiler' ? 'price_rent' : 'price_transfer'
      const rows = await sql.unsafe<{ id: number }[]>(
        `select property_id as id from catalogue_entries where business_id = $1 ` +
          `and ${column} >= $2 and ${column} <= $3 order by updated_at desc, property_id desc`,
        [other, params.min_price ?? -1e308, params.max_price ?? 1e308],
      )
      expect((await queryCataloguePage(sql, query)).count, JSON.stringify(params)).toBe(rows.length)
      // The page too: its bounds are stored prices, so an inclusive edge decides what it holds.
      expect((await listCatalogueIds(sql, query)).ids, JSON.stringify(params)).toEqual(rows.slice(0, 100).map((row) => row.id))
    }
  } finally {
    await sql`delete from businesses where id = ${other}`
  }
})
