/**
 * A map rectangle alone is answered by catalogue_box_page (migration 0023): its total from
 * catalogue_geo_cells plus the four edge strips, its page from whichever index is cheaper. Both
 * must equal counting and sorting the rows, for any rectangle, including coordinates on cell
 * edges (k/64) and one unit in the last place either side, after inserts, moves, hidden points
 * and deletes, in each of the list statement's outputs.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import postgres from 'postgres'
import { catalogueListSql, queryCataloguePage, listCatalogueIds, listCatalogueRows } from '../../db/queries/catalogue/list'
import { catalogueQueryOf } from '../../shared/listings/catalogue-filters'
import { prng } from '../faults/load'

const sql = postgres(process.env.DATABASE_URL!, { max: 2, onnotice: () => {} })
let businessId: number
afterAll(async () => {
  await sql`delete from businesses where id = ${businessId}`
  await sql.end({ timeout: 1 })
})

const r = prng(64)

const bits = new Float64Array(1)
const ints = new BigInt64Array(bits.buffer)
/** The next float8 above or below x (x finite, not zero). */
function ulp(x: number, direction: 1 | -1): number {
  bits[0] = x
  ints[0] += BigInt(x > 0 ? direction : -direction)
  return bits[0]
}

// 16 × 16 cells of 1/64° around Madrid, so most cells hold a dozen points.
const [WEST, SOUTH, SIZE] = [-3.5, 40.25, 0.25]
/** A coordinate in [min, min + SIZE]: anywhere, on a cell edge, or one ulp either side of one. */
function coordinate(min: number): number {
  const edge = (Math.floor(min * 64) + 1 + Math.floor(r() * 15)) / 64
  const choice = r()
  if (choice < 0.15) return edge
  if (choice < 0.25) return ulp(edge, 1)
  if (choice < 0.35) return ulp(edge, -1)
  return min + r() * SIZE
}

interface Row {
  id: number
  lng: number | null
  lat: number | null
}
let rows: Row[] = []

async function reload() {
  rows = (
    await sql<{ id: number; lng: number | null; lat: number | null }[]>`
    select property_id as id, pt[0] as lng, pt[1] as lat from catalogue_entries where business_id = ${businessId}`
  ).map((row) => ({ ...row }))
}

beforeAll(async () => {
  ;[{ id: businessId }] = await sql`insert into businesses (name) values ('geo-cells') returning id`
  await sql`
    insert into properties (business_id, operations, type, title, location, area, published_at)
    select ${businessId}, '{venta}', 'casa', 't', '{"city":"x"}', '{"total":1}', now() from generate_series(1, 3000)`
  const ids = (await sql<{ id: number }[]>`select id from properties where business_id = ${businessId} order by id`).map((row) => row.id)
  const lngs = ids.map(() => coordinate(WEST))
  const lats = ids.map(() => coordinate(SOUTH))
  // Every 25th point hidden (no geog); updated_at repeats so the page's tie-break by id matters.
  await sql`
    insert into catalogue_entries (property_id, business_id, doc, status, operations, type, bedrooms, is_featured, geog, updated_at)
    select id, ${businessId}, json_build_object('id', id), 'disponible', '{venta}', 'casa', 0, false,
      case when id % 25 = 0 then null else ST_SetSRID(ST_MakePoint(lng, lat), 4326)::geography end,
      timestamptz '2026-01-01' + (id % 97) * interval '1 minute'
    from unnest(${ids}::int[], ${lngs}::float8[], ${lats}::float8[]) as u(id, lng, lat)`
  await reload()
})

/** What the rectangle must answer, from the rows themselves. */
async function expected(w: number, s: number, e: number, n: number, limit: number, offset: number) {
  const found = await sql<{ id: number }[]>`
    select property_id as id from catalogue_entries
    where business_id = ${businessId} and st_x(geog::geometry) between ${w} and ${e} and st_y(geog::geometry) between ${s} and ${n}
    order by updated_at desc, property_id desc`
  return { count: found.length, ids: found.slice(offset, offset + limit).map((row) => row.id) }
}

const rectangle = (w: number, s: number, e: number, n: number) =>
  JSON.stringify([
    {
      geometry: {
        type: 'rectangle',
        coordinates: [
          [s, w],
          [s, e],
          [n, e],
          [n, w],
        ],
      },
    },
  ])

/** A bound: a stored point's coordinate (edges included), a cell edge, one ulp off one, or anywhere. */
function bound(min: number, axis: 'lng' | 'lat'): number {
  const choice = r()
  const some = rows[Math.floor(r() * rows.length)][axis]
  if (choice < 0.25 && some !== null) return some
  return coordinate(min - SIZE * 0.1)
}

async function checkRectangles(rounds: number) {
  for (let i = 0; i < rounds; i++) {
    // Distinct bounds: a rectangle without width or height has fewer than three distinct corners
    // and is dropped as invalid (api-spec §4.3 rule 5), so the list would not be filtered.
    const distinct = (x: number, y: number) => (x === y ? ulp(y, 1) : y)
    const a = bound(WEST, 'lng')
    const b = distinct(a, bound(WEST, 'lng'))
    const c = bound(SOUTH, 'lat')
    const d = distinct(c, bound(SOUTH, 'lat'))
    // Wide rectangles (the page walks the default order's index) and narrow ones (read from the GiST).
    const [w, e] = r() < 0.5 ? [Math.min(a, b), Math.max(a, b)] : [WEST - 0.01, WEST + SIZE + 0.01]
    const [s, n] = r() < 0.5 ? [Math.min(c, d), Math.max(c, d)] : [SOUTH - 0.01, SOUTH + SIZE + 0.01]
    const limit = [1, 20, 100][i % 3]
    const offset = r() < 0.7 ? 0 : Math.floor(r() * 400)
    const params = { locations: rectangle(w, s, e, n), limit, offset }
    const { query } = catalogueQueryOf(businessId, params)
    const want = await expected(w, s, e, n, query.limit, query.offset)
    const label = JSON.stringify({ w, s, e, n, limit, offset })
    const page = await queryCataloguePage(sql, query)
    expect({ count: page.count, ids: JSON.parse(`[${Buffer.from(page.data).toString()}]`).map((doc: { id: number }) => doc.id) }, label).toEqual(want)
    const fromIds = await listCatalogueIds(sql, query)
    expect({ count: fromIds.count, ids: fromIds.ids }, label).toEqual(want)
    const fromRows = await listCatalogueRows(sql, query)
    expect({ count: fromRows.count, ids: fromRows.docs.map(([id]) => id) }, label).toEqual(want)
  }
}

async function cellsMatchRows() {
  const [{ bad }] = await sql<{ bad: number }[]>`
    select count(*)::int as bad from (
      select cy, cx, n from catalogue_geo_cells where business_id = ${businessId} and n <> 0
      except
      select floor(pt[1] * 64)::int, floor(pt[0] * 64)::int, count(*) from catalogue_entries where business_id = ${businessId} and pt is not null group by 1, 2
    ) x`
  expect(bad).toBe(0)
}

describe('a map rectangle alone (catalogue_box_page, catalogue_geo_cells)', () => {
  test('is one call of catalogue_box_page; with another filter it is the general statement', () => {
    const only = catalogueQueryOf(1, { locations: rectangle(-3.5, 40.2, -3.4, 40.3) }).query
    expect(catalogueListSql(only).text).toContain('catalogue_box_page(')
    for (const extra of [{ type: 'casa' }, { operation: 'venta' }, { q: 'piscina' }, { sort: 'price_asc' }, { min_bedrooms: 2 }] as const) {
      const query = catalogueQueryOf(1, { locations: rectangle(-3.5, 40.2, -3.4, 40.3), ...extra }).query
      expect(catalogueListSql(query).text, JSON.stringify(extra)).not.toContain('catalogue_box_page(')
    }
  })

  test('total and page equal the rows, for rectangles with edges on and one ulp around cell edges and points', async () => {
    await cellsMatchRows()
    await checkRectangles(240)
  })

  test("a rectangle holding most of the business walks the default order's B-tree for its page, on every call", async () => {
    // The walk's point tests are estimated from the statistics on pt[0] and pt[1], and planned
    // with each call's rectangle (migration 0025). Without the statistics, or with the generic
    // plan PL/pgSQL adopts after five calls, the planner took them to keep ~0 rows and read every
    // entry of the business from the GiST and sorted them instead.
    // Statistics as autovacuum keeps them in service (it may be off here): 3,000 rows in this business.
    await sql`analyze catalogue_entries`
    const plans: string[] = []
    const traced = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: (notice) => void plans.push(String(notice.message)) })
    try {
      await traced.unsafe(`load 'auto_explain'; set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on;
        set auto_explain.log_level = notice; set client_min_messages = notice;
        set plan_cache_mode = force_generic_plan`)
      // Generic plans from the first call (PL/pgSQL would adopt them after five).
      for (let call = 0; call < 8; call++) {
        const [w, s, e, n] = [WEST - 0.01 - call / 1000, SOUTH - 0.01, WEST + SIZE + 0.01, SOUTH + SIZE + 0.01]
        const { query } = catalogueQueryOf(businessId, { locations: rectangle(w, s, e, n) })
        expect(await listCatalogueIds(traced, query)).toMatchObject(await expected(w, s, e, n, query.limit, query.offset))
      }
    } finally {
      await traced.end({ timeout: 1 })
    }
    const pages = plans.filter((plan) => plan.includes('array_agg(property_id ORDER BY'))
    expect(pages).toHaveLength(8)
    for (const page of pages) {
      expect(page).toContain('catalogue_business_updated_idx')
      expect(page).not.toContain('catalogue_business_pt_gist')
    }
  })

  test('the cells follow moves, hidden and shown points, and deletes', async () => {
    await sql`update catalogue_entries set geog = ST_SetSRID(ST_MakePoint(st_x(geog::geometry) + 1.0 / 64, st_y(geog::geometry)), 4326)::geography
      where business_id = ${businessId} and property_id % 3 = 0 and geog is not null`
    await sql`update catalogue_entries set geog = null where business_id = ${businessId} and property_id % 7 = 0`
    await sql`update catalogue_entries set geog = ST_SetSRID(ST_MakePoint(-3.375, 40.375), 4326)::geography
      where business_id = ${businessId} and property_id % 25 = 0`
    await sql`update catalogue_entries set updated_at = updated_at + interval '1 day' where business_id = ${businessId} and property_id % 11 = 0`
    await sql`delete from catalogue_entries where business_id = ${businessId} and property_id % 5 = 0`
    await reload()
    await cellsMatchRows()
    await checkRectangles(120)
  })

  test('an offset past the total is an empty page with the total, up to the largest offset the API takes', async () => {
    for (const offset of [9000, 2_147_483_647]) {
      // limit + offset overflows a PostgreSQL integer: the function must not add them as one.
      const { query } = catalogueQueryOf(businessId, { locations: rectangle(WEST - 1, SOUTH - 1, WEST + 1, SOUTH + 1), offset, limit: 1000 })
      const want = await expected(WEST - 1, SOUTH - 1, WEST + 1, SOUTH + 1, 1000, offset)
      expect(want.ids).toEqual([])
      expect(await listCatalogueIds(sql, query)).toMatchObject({ count: want.count, ids: [] })
    }
    const { query } = catalogueQueryOf(businessId, { locations: rectangle(WEST - 1, SOUTH - 1, WEST + 1, SOUTH + 1), offset: 9000 })
    const want = await expected(WEST - 1, SOUTH - 1, WEST + 1, SOUTH + 1, 20, 9000)
    const page = await queryCataloguePage(sql, query)
    expect({ count: page.count, bytes: page.data.byteLength }).toEqual({ count: want.count, bytes: 0 })
    expect(await listCatalogueIds(sql, query)).toMatchObject({ count: want.count, ids: [] })
    expect(await listCatalogueRows(sql, query)).toMatchObject({ count: want.count, docs: [] })
  })
})
