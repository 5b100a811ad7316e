/**
 * The catalogue read model (architecture.md "Data"): `catalogue_entries` holds, per published
 * property, the public JSON and the columns every filter of api-spec §4.3 reads. shared/listings
 * builds both from the source rows read here; rows are rebuilt from the source tables only, so a
 * rebuild is idempotent.
 */
import { and, asc, eq, gt, inArray, lt, isNotNull, sql as dsql } from 'drizzle-orm'
import type { Db, Sql } from '../client'
import { businesses, properties, propertyImages, type PropertyRow } from '../schema'

/** A `property_images` row in state `ready` with its public URL (never the original key). */
export interface ReadyImageRow {
  id: string
  publicUrl: string
  position: number
  isPrimary: boolean
  title: string
}

/** The columns the list filters and sorts read. */
export interface CatalogueFilterColumns {
  status: string
  operations: string[]
  type: string
  subtypeKey: string | null
  cityLc: string
  priceSale: number | null
  priceRent: number | null
  priceTransfer: number | null
  bedrooms: number
  isFeatured: boolean
  rentalKind: string | null
  /** Stored as `geog`; null when the property shows no point. */
  point: { lat: number; lon: number } | null
}

/** One catalogue row: the public JSON served as it is stored, and its filter columns. */
export interface CatalogueEntry extends CatalogueFilterColumns {
  propertyId: number
  businessId: number
  doc: unknown
  updatedAt: Date
}

export type PriceColumn = 'price_sale' | 'price_rent' | 'price_transfer'

/** Longitude/latitude bounds that hold every point of an area (a prefilter, never the test itself). */
export interface GeoBox {
  west: number
  south: number
  east: number
  north: number
}

/**
 * A circle as centre + radius in metres, or a planar polygon as closed EWKT (lng lat order, SRID
 * 4326); each with a box holding all of it, which an index answers before the exact test.
 */
export type SqlArea =
  | { kind: 'circle'; lng: number; lat: number; radius: number; box: GeoBox }
  | { kind: 'polygon'; wkt: string; box: GeoBox }
  /** A polygon that is exactly its box (four corners, edges along meridians and parallels). */
  | { kind: 'box'; box: GeoBox }

/** What one page of the list filters on, sorts by and skips. */
export interface CatalogueListQuery {
  businessId: number
  limit: number
  offset: number
  status?: string
  /** Operations the `operation` filter matched (maybe none → nothing matches); undefined = no filter. */
  operations?: string[]
  priceColumn: PriceColumn
  rentalKind?: 'temporal' | 'anual'
  type?: string
  subtypeKey?: string
  cityLc?: string
  /** undefined or empty = no area filter. */
  areas?: SqlArea[]
  minPrice?: number
  maxPrice?: number
  minBedrooms?: number
  isFeatured?: boolean
  /** Web-search text (contract §11); without `sort` it orders by relevance. */
  search?: string
  /**
   * With `search` (required then): how many matches are ranked, counted and paged at most
   * (contract §11). The statement reads one more, so a count past the bound shows it was reached.
   */
  searchBound?: number
  sort?: 'price_asc' | 'price_desc'
}

/** Ready images of these properties, each list in position order. */
export async function readyImagesOf(db: Db, propertyIds: number[]): Promise<Map<number, ReadyImageRow[]>> {
  const byProperty = new Map<number, ReadyImageRow[]>()
  if (propertyIds.length === 0) return byProperty
  const rows = await db
    .select({ propertyId: propertyImages.propertyId, id: propertyImages.id, publicUrl: propertyImages.publicUrl, position: propertyImages.position, isPrimary: propertyImages.isPrimary, title: propertyImages.title })
    .from(propertyImages)
    .where(and(inArray(propertyImages.propertyId, propertyIds), eq(propertyImages.state, 'ready'), isNotNull(propertyImages.publicUrl)))
    .orderBy(asc(propertyImages.propertyId), asc(propertyImages.position))
  for (const r of rows) {
    const list = byProperty.get(r.propertyId) ?? []
    list.push({ id: r.id, publicUrl: r.publicUrl!, position: r.position, isPrimary: r.isPrimary, title: r.title })
    byProperty.set(r.propertyId, list)
  }
  return byProperty
}

/**
 * Upserts many entries in one statement (one JSON parameter, so any batch size is one round
 * trip) and returns the business of every row whose public document is new or changed.
 *
 * A row whose columns already hold these values is not written at all (a rebuild that changes
 * nothing leaves no trace), unless it still lacks its search vector (stored before migration
 * 0011). `changed_at` moves only when `doc` changes; `tsv` follows `doc` through the row's
 * trigger. A row counts as changed when its `changed_at` is this transaction's `now()`.
 */
export async function upsertCatalogueEntries(db: Db, entries: CatalogueEntry[]): Promise<number[]> {
  if (entries.length === 0) return []
  const records = entries.map((e) => ({
    property_id: e.propertyId,
    business_id: e.businessId,
    doc: e.doc,
    status: e.status,
    operations: e.operations,
    type: e.type,
    subtype_key: e.subtypeKey,
    city_lc: e.cityLc,
    price_sale: e.priceSale,
    price_rent: e.priceRent,
    price_transfer: e.priceTransfer,
    bedrooms: e.bedrooms,
    is_featured: e.isFeatured,
    rental_kind: e.rentalKind,
    lat: e.point?.lat ?? null,
    lon: e.point?.lon ?? null,
    updated_at: e.updatedAt.toISOString(),
  }))
  // `doc` is json (migration 0015), which has no equality: its text is compared, jsonb's rendering on both sides.
  const columns = 'business_id, doc::text, status, operations, type, subtype_key, city_lc, price_sale, price_rent, price_transfer, bedrooms, is_featured, rental_kind, updated_at'.split(', ')
  const stored = [...columns.map((c) => `catalogue_entries.${c}`), 'ST_AsBinary(catalogue_entries.geog)'].join(', ')
  const proposed = [...columns.map((c) => `excluded.${c}`), 'ST_AsBinary(excluded.geog)'].join(', ')
  const rows = await db.execute<{ business_id: number; changed: boolean }>(dsql`
    insert into catalogue_entries (property_id, business_id, doc, status, operations, type, subtype_key, city_lc,
      price_sale, price_rent, price_transfer, bedrooms, is_featured, rental_kind, geog, updated_at)
    select e.property_id, e.business_id, e.doc::json, e.status, e.operations, e.type, e.subtype_key, e.city_lc,
      e.price_sale, e.price_rent, e.price_transfer, e.bedrooms, e.is_featured, e.rental_kind,
      case when e.lon is null then null else ST_SetSRID(ST_MakePoint(e.lon, e.lat), 4326)::geography end,
      e.updated_at
    from jsonb_to_recordset(${JSON.stringify(records)}::jsonb) as e(property_id int, business_id int, doc jsonb, status text,
      operations text[], type text, subtype_key text, city_lc text, price_sale float8, price_rent float8, price_transfer float8,
      bedrooms int, is_featured boolean, rental_kind text, lat float8, lon float8, updated_at timestamptz)
    on conflict (property_id) do update set business_id = excluded.business_id, doc = excluded.doc, status = excluded.status,
      operations = excluded.operations, type = excluded.type, subtype_key = excluded.subtype_key, city_lc = excluded.city_lc,
      price_sale = excluded.price_sale, price_rent = excluded.price_rent, price_transfer = excluded.price_transfer,
      bedrooms = excluded.bedrooms, is_featured = excluded.is_featured, rental_kind = excluded.rental_kind,
      geog = excluded.geog, updated_at = excluded.updated_at,
      changed_at = case when catalogue_entries.doc::text is distinct from excluded.doc::text then now() else catalogue_entries.changed_at end
    where (${dsql.raw(stored)}) is distinct from (${dsql.raw(proposed)}) or catalogue_entries.tsv is null
    returning business_id, changed_at = now() as changed`)
  return [...new Set(rows.filter((r) => r.changed).map((r) => r.business_id))]
}

/** Deletes the catalogue rows of these properties; returns the business of each row deleted. */
export async function deleteCatalogueEntries(db: Db, propertyIds: number[]): Promise<number[]> {
  if (propertyIds.length === 0) return []
  const rows = await db.execute<{ business_id: number }>(
    dsql`delete from catalogue_entries where property_id = any(${dsql.raw(`'{${propertyIds.map((id) => Math.trunc(id)).join(',')}}'::int[]`)}) returning business_id`,
  )
  return [...new Set(rows.map((r) => r.business_id))]
}

/**
 * Bumps the catalogue version of these businesses (architecture.md "Catalogue version"), in the
 * caller's transaction. The rows are locked in id order, so two batches that touch the same
 * businesses never deadlock, and with FOR NO KEY UPDATE (what the UPDATE takes anyway), which
 * the foreign-key checks of another transaction's catalogue writes (FOR KEY SHARE on the
 * business) never wait for: FOR UPDATE deadlocked two reindex batches. Each row stays locked
 * until commit, so versions follow commit order. `catalogue_changed_at` is the clock at the
 * bump (later than any commit that bumped before it) and never moves backwards.
 */
export async function bumpCatalogueVersions(db: Db, businessIds: number[]): Promise<void> {
  if (businessIds.length === 0) return
  const ids = dsql.raw(`'{${[...new Set(businessIds.map((id) => Math.trunc(id)))].join(',')}}'::int[]`)
  await db.execute(dsql`
    update businesses b set catalogue_version = b.catalogue_version + 1, catalogue_changed_at = greatest(b.catalogue_changed_at, clock_timestamp())
    from (select id from businesses where id = any(${ids}) order by id for no key update) locked
    where b.id = locked.id`)
}

/**
 * Takes the lock bumpCatalogueVersions takes, before a catalogue write of one listing. Otherwise
 * the write's foreign-key check takes FOR KEY SHARE on the business first, and two publishes or
 * PATCHes of one business holding it deadlocked in the bump (40P01, fault harness scenario i:
 * 13 of 320 PATCHes through PgBouncer). Locked first, the second waits for the first to commit.
 */
export async function lockCatalogueVersion(db: Db, businessId: number): Promise<void> {
  await db.execute(dsql`select id from businesses where id = ${businessId} for no key update`)
}

/**
 * The source row of one property for a rebuild, whatever its business. FOR SHARE waits for a
 * concurrent write of the property to commit, so a rebuild never overwrites a newer row with
 * what it read before that write.
 */
export async function findPropertyForRebuild(db: Db, propertyId: number): Promise<PropertyRow | null> {
  const [row] = await db.select().from(properties).where(eq(properties.id, propertyId)).for('share')
  return row ?? null
}

/** One slice of a rebuild: properties with afterId < id < beforeId (of one business, or all). */
export interface PropertySlice {
  businessId?: number
  afterId: number
  beforeId?: number
  batchSize: number
}

/** The next `batchSize` properties of the slice, in id order. */
export async function propertiesInSlice(db: Db, slice: PropertySlice): Promise<PropertyRow[]> {
  const where = and(
    gt(properties.id, slice.afterId),
    slice.beforeId === undefined ? undefined : lt(properties.id, slice.beforeId),
    slice.businessId === undefined ? undefined : eq(properties.businessId, slice.businessId),
  )
  return db.select().from(properties).where(where).orderBy(asc(properties.id)).limit(slice.batchSize)
}

/**
 * Moves the stored catalogue derivation forward to `version` (in the caller's transaction, its
 * row locked until commit); true when this call moved it, so exactly one caller acts on it.
 */
export async function advanceCatalogueDerivation(db: Db, version: number): Promise<boolean> {
  const rows = await db.execute(dsql`update catalogue_derivation set version = ${version} where id and version < ${version} returning version`)
  return rows.length > 0
}

/** Businesses that have catalogue rows, from the trigger-kept counts (no scan of the rows). */
export async function businessesWithCatalogueRows(db: Db): Promise<number[]> {
  const rows = await db.execute<{ business_id: number }>(dsql`select business_id from catalogue_counts where entries > 0 order by business_id`)
  return rows.map((r) => r.business_id)
}

/** The stored public JSON of one published property of this business, as text (no re-serialising). */
export async function getCatalogueDocText(sql: Sql, businessId: number, propertyId: number): Promise<string | null> {
  // Primary key lookup; business_id checked so another workspace's id is "not found".
  const rows = await sql<{ doc: string }[]>`select doc::text as doc from catalogue_entries where property_id = ${propertyId} and business_id = ${businessId}`
  return rows[0]?.doc ?? null
}

const OPERATION_LITERALS = new Set(['venta', 'alquiler', 'traspaso'])

/**
 * The tsquery of `search`: catalogue_search_query (migration 0011) parses it with
 * websearch_to_tsquery in Spanish and in English, both unaccented, so any text is a valid query.
 * The statement is planned with its value, so PostgreSQL folds this into a constant tsquery that
 * catalogue_business_tsv_gin answers together with business_id.
 */
const searchQuery = (ref: string) => `catalogue_search_query(${ref}::text)`

/**
 * WHERE of the list, as SQL text with $n placeholders, and the placeholder holding the search
 * text (when there is one). Operations are inlined as literals from the fixed set (never user
 * text) so the planner can match the per-operation partial price indexes (migration 0001).
 */
function whereOf(q: CatalogueListQuery, params: unknown[]): { where: string; searchRef?: string; priceRefs: { min?: string; max?: string } } {
  const p = (value: unknown) => {
    params.push(value)
    return `$${params.length}`
  }
  const parts = [`business_id = ${p(q.businessId)}`]
  if (q.operations !== undefined) {
    const ops = q.operations.filter((o) => OPERATION_LITERALS.has(o))
    if (ops.length === 0) parts.push('false')
    else if (ops.length === 1) parts.push(`operations @> '{${ops[0]}}'::text[]`)
    else parts.push(`operations && '{${ops.join(',')}}'::text[]`)
  }
  if (q.status !== undefined) parts.push(`status = ${p(q.status)}`)
  if (q.rentalKind !== undefined) parts.push(`rental_kind = ${p(q.rentalKind)}`)
  if (q.type !== undefined) parts.push(`type = ${p(q.type)}`)
  if (q.subtypeKey !== undefined) parts.push(`subtype_key = ${p(q.subtypeKey)}`)
  if (q.cityLc !== undefined) parts.push(`city_lc = ${p(q.cityLc)}`)
  const priceRefs: { min?: string; max?: string } = {}
  if (q.minPrice !== undefined) parts.push(`${q.priceColumn} >= ${(priceRefs.min = p(q.minPrice))}::float8`)
  if (q.maxPrice !== undefined) parts.push(`${q.priceColumn} <= ${(priceRefs.max = p(q.maxPrice))}::float8`)
  if (q.minBedrooms !== undefined) parts.push(`bedrooms >= ${p(q.minBedrooms)}::int`)
  if (q.isFeatured !== undefined) parts.push(`is_featured = ${p(q.isFeatured)}::boolean`)
  let searchRef: string | undefined
  if (q.search !== undefined) {
    searchRef = p(q.search)
    parts.push(`tsv @@ ${searchQuery(searchRef)}`)
  }
  if (q.areas && q.areas.length) {
    // A null geog (hidden) never matches. Each area first keeps the points of its bounding box
    // (`pt <@ box`, answered by catalogue_business_pt_gist), then the exact test runs on `geog`,
    // which that index INCLUDEs: the whole filter is an index-only scan. Circles are metres on the
    // sphere (geography); polygons and rectangles are the straight latitude/longitude lines a map
    // draws, so they test the planar point (`geog::geometry`).
    const areas = q.areas.map((a) => {
      const [west, south, east, north] = [p(a.box.west), p(a.box.south), p(a.box.east), p(a.box.north)]
      const box = `pt <@ box(point(${west}::float8, ${south}::float8), point(${east}::float8, ${north}::float8))`
      // A box's exact test is the comparison of the point's own coordinates (what ST_Intersects
      // answers for a point and an axis-aligned rectangle, edges included), half its cost.
      const exact =
        a.kind === 'circle'
          ? `ST_DWithin(geog, ST_SetSRID(ST_MakePoint(${p(a.lng)}::float8, ${p(a.lat)}::float8), 4326)::geography, ${p(a.radius)}::float8)`
          : a.kind === 'box'
            ? `pt[0] between ${west} and ${east} and pt[1] between ${south} and ${north}`
            : `ST_Intersects(geog::geometry, ST_GeomFromEWKT(${p(a.wkt)}::text))`
      return `(${box} and ${exact})`
    })
    parts.push(`(${areas.join(' or ')})`)
  }
  return { where: parts.join(' and '), searchRef, priceRefs }
}

/**
 * Sort keys. Each has a B-tree that yields it directly: default → catalogue_business_updated_idx;
 * price_asc/desc → catalogue_<op>_<price>_<dir>_idx when one operation is filtered, else
 * catalogue_sale_<dir>_idx. `nulls last` on the id and updated_at too (never null): it is how
 * the indexes are built, so the planner reads the order straight from them. Relevance (a search
 * without `sort`, contract §11) reads the page's `rank` column, `rankRef` (no index yields it).
 */
function orderOf(q: CatalogueListQuery, alias = '', rankRef?: string): string {
  const price = `${alias}${q.priceColumn}`
  if (q.sort === 'price_asc') return `${price} asc nulls last, ${alias}property_id desc nulls last`
  if (q.sort === 'price_desc') return `${price} desc nulls last, ${alias}property_id desc nulls last`
  const recent = `${alias}updated_at desc nulls last, ${alias}property_id desc nulls last`
  return rankRef ? `${rankRef} desc, ${recent}` : recent
}

export type CountMode = 'separate' | 'materialized' | 'box' | 'price-range' | 'bounded'

/** Whether the query filters on a column other than the operation and the price, or searches. */
const filtersOtherColumns = (q: CatalogueListQuery) =>
  [q.status, q.rentalKind, q.type, q.subtypeKey, q.cityLc, q.minBedrooms, q.isFeatured, q.search].some((v) => v !== undefined)

/** Whether the query filters on anything besides its business, its operation and its price range. */
const filtersBeyondOperationAndPrice = (q: CatalogueListQuery) => filtersOtherColumns(q) || Boolean(q.areas?.length)

/** The one operation a query filters on, when it is exactly one of the fixed set. */
const singleOperation = (q: CatalogueListQuery) => (q.operations?.length === 1 && OPERATION_LITERALS.has(q.operations[0]) ? q.operations[0] : undefined)

/** Each operation's price column and the width of its buckets in catalogue_price_counts (migration 0019's catalogue_price_width). */
const PRICE_BUCKETS: Record<string, { column: PriceColumn; width: number }> = {
  venta: { column: 'price_sale', width: 10000 },
  alquiler: { column: 'price_rent', width: 50 },
  traspaso: { column: 'price_transfer', width: 5000 },
}

/**
 * The total of one operation's price range and nothing else, from catalogue_price_counts: the
 * buckets k1..k2 wholly inside the range, plus the listings of the range in the minimum's bucket
 * and in the maximum's, counted from the price index (one bucket at each edge). Exact: every
 * listing of the range is in exactly one of the three parts, because a listing's bucket never
 * decreases as its price grows (migration 0022 gives the argument and the index ranges' margins).
 * Undefined for any query countedPriceRange refuses (counted directly).
 */
function priceRangeCount(q: CatalogueListQuery, refs: { min?: string; max?: string }): string | undefined {
  const op = countedPriceRange(q)
  if (!op) return undefined
  // The three parts run inside catalogue_price_range_count (migrations 0021, 0022), whose queries the
  // server plans once per connection: as sub-selects of this statement they were planned on every
  // request, 1.2 ms of its 1.6 ms.
  return `select catalogue_price_range_count($1, '${op}', ${refs.min ?? 'null'}::float8, ${refs.max ?? 'null'}::float8)`
}

/**
 * The operation of a query whose total priceRangeCount reads from the buckets: one operation and
 * its price range, nothing else, bounds within ±1e15, at least eight buckets wide. Undefined for
 * any other. PRICE_BUCKETS' widths are catalogue_price_width's (migration 0019).
 */
function countedPriceRange(q: CatalogueListQuery): string | undefined {
  const op = singleOperation(q)
  const buckets = op ? PRICE_BUCKETS[op] : undefined
  if (!op || !buckets || buckets.column !== q.priceColumn || (q.minPrice === undefined && q.maxPrice === undefined)) return undefined
  if (filtersBeyondOperationAndPrice(q)) return undefined
  // Up to ±1e15, bucket · width is an exact integer below 2^53: the edges' index ranges rely on it.
  if ([q.minPrice, q.maxPrice].some((b) => b !== undefined && Math.abs(b) > 1e15)) return undefined
  if (q.minPrice !== undefined && q.maxPrice !== undefined && (q.maxPrice - q.minPrice) / buckets.width < 8) return undefined
  return op
}

/**
 * The total of the query. The business alone, or the business and one operation, are read from
 * the trigger-kept catalogue_counts row (migrations 0003, 0017; same transaction as the rows, so
 * read-your-writes holds); one operation's price range from the price buckets; anything else is
 * counted.
 */
function countStatement(q: CatalogueListQuery, where: string, priceRefs: { min?: string; max?: string }): string {
  const onlyOperation = !filtersBeyondOperationAndPrice(q) && priceRefs.min === undefined && priceRefs.max === undefined
  if (onlyOperation && q.operations === undefined) return 'select coalesce((select entries from catalogue_counts where business_id = $1), 0)'
  const op = singleOperation(q)
  if (onlyOperation && op) return `select coalesce((select ${op} from catalogue_counts where business_id = $1), 0)`
  return priceRangeCount(q, priceRefs) ?? `select count(*) from catalogue_entries where ${where}`
}

/**
 * A rectangle drawn on a map (a polygon that is its box) and nothing else, in the default order:
 * catalogue_box_page (migration 0023) counts it from catalogue_geo_cells and picks the cheaper way
 * to its page.
 */
const onlyABox = (q: CatalogueListQuery) =>
  q.areas?.length === 1 && q.areas[0].kind === 'box' && q.operations === undefined && q.minPrice === undefined && q.maxPrice === undefined &&
  !q.sort && !filtersOtherColumns(q)

/**
 * The count mode a query gets by default. A search reads at most its bound of matches plus one
 * (`bounded`). A map rectangle alone is answered by catalogue_box_page (`box`). An area or a city
 * reads every match to sort them (no index yields the order within them), so the matches are
 * read once into a materialized CTE that both the count and the page read (a city-wide polygon of
 * 4,500 matches: 8.5 → 4.5 ms). Every other list reads its page from an index in order (the
 * default order's index carries the filter columns) and counts apart: a counter, or an
 * index-only count (a price range: materialized 297 req/s, separate 468 req/s at 1M listings, c=16).
 */
export const defaultCountMode = (q: CatalogueListQuery): CountMode => {
  if (q.search !== undefined) return 'bounded'
  if (onlyABox(q)) return 'box'
  if (!q.sort && countedPriceRange(q)) return 'price-range'
  return q.areas?.length || q.cityLc !== undefined ? 'materialized' : 'separate'
}

/**
 * One statement: the page's ids in sort order (a deferred join, so the rows a large offset skips
 * never load their doc), the total count from the same WHERE, and the page's docs aggregated in
 * order into the text of the JSON array's elements.
 *
 * Sent unprepared (unnamed statement): PostgreSQL then plans it with the actual values, and a
 * generic plan cannot pick an index that is wrong for this price range or area (measured: a
 * prepared price-range query went from 6 ms to 75 ms once the generic plan kicked in).
 */
export function catalogueListSql(q: CatalogueListQuery, mode: CountMode = defaultCountMode(q), output: ListOutput = 'page'): { text: string; params: unknown[] } {
  if (mode === 'box') return boxPageSql(q, output)
  if (mode === 'price-range') return priceRangePageSql(q, output)
  if (mode === 'bounded' || q.search !== undefined) return searchPageSql(q, output)
  const params: unknown[] = []
  const { where, priceRefs } = whereOf(q, params)
  const countSql = countStatement(q, where, priceRefs)
  const limit = `${(params.push(q.limit), `$${params.length}`)}::int`
  const offset = `${(params.push(q.offset), `$${params.length}`)}::int`
  const cols = q.sort ? `property_id, ${q.priceColumn}` : 'property_id, updated_at'
  const pageOrder = orderOf(q)
  let ctes: string
  let count: string
  if (mode === 'materialized') {
    ctes = `matches as materialized (select ${cols} from catalogue_entries where ${where}),
page as (select * from matches order by ${pageOrder} limit ${limit} offset ${offset})`
    count = '(select count(*) from matches)'
  } else {
    ctes = `page as (select ${cols} from catalogue_entries where ${where} order by ${pageOrder} limit ${limit} offset ${offset})`
    count = `(${countSql})`
  }
  return pageStatement(ctes, count, pageOrder, orderOf(q, 'c.'), output, params)
}

/**
 * The list statement of a search (contract §11): the matches are taken in the list's order (the
 * most recently updated first, or `sort`'s) and at most `searchBound` + 1 of them are read, into
 * a materialized CTE that the count and the page both read. Without `sort` the first
 * `searchBound` are ranked by relevance, ties by recency. So no statement ranks, counts or
 * fetches more than the bound, whatever the number of matches: the `LIMIT` lets the planner
 * walk catalogue_business_updated_idx testing each row for a common word, and take the word's
 * posting list from catalogue_business_tsv_gin for a rare one. A count of `searchBound` + 1
 * means "at least the bound".
 */
function searchPageSql(q: CatalogueListQuery, output: ListOutput): { text: string; params: unknown[] } {
  const bound = q.searchBound
  if (bound === undefined) throw new Error('searchPageSql: a search needs its searchBound')
  const params: unknown[] = []
  const { where, searchRef } = whereOf(q, params)
  const limit = `${(params.push(q.limit), `$${params.length}`)}::int`
  const offset = `${(params.push(q.offset), `$${params.length}`)}::int`
  const candidates = `${(params.push(bound), `$${params.length}`)}::int`
  const order = orderOf(q)
  let ctes: string
  let pageOrder: string
  let docOrder: string
  if (q.sort) {
    ctes = `matches as materialized (select property_id, ${q.priceColumn} from catalogue_entries where ${where} order by ${order} limit ${candidates} + 1),
page as (select * from matches order by ${order} limit least(${limit}, greatest(${candidates} - ${offset}, 0)) offset ${offset})`
    pageOrder = order
    docOrder = orderOf(q, 'c.')
  } else {
    // Relevance is ts_rank, not ts_rank_cd: cover density cost ten times more per match (docs/properties.md).
    ctes = `matches as materialized (select property_id, updated_at, tsv from catalogue_entries where ${where} order by ${order} limit ${candidates} + 1),
ranked as (select property_id, updated_at, ts_rank(tsv, ${searchQuery(searchRef!)}) as rank from matches order by ${order} limit ${candidates}),
page as (select * from ranked order by ${orderOf(q, '', 'rank')} limit ${limit} offset ${offset})`
    pageOrder = orderOf(q, '', 'rank')
    docOrder = orderOf(q, 'c.', 'page.rank')
  }
  return pageStatement(ctes, '(select count(*) from matches)', pageOrder, docOrder, output, params)
}

/** The statement around CTEs ending in `page` (the page's `property_id`s) and the SQL of its `count`. */
function pageStatement(ctes: string, count: string, pageOrder: string, docOrder: string, output: ListOutput, params: unknown[]): { text: string; params: unknown[] } {
  if (output === 'ids') {
    return { text: `with ${ctes}\nselect ${count}::int as count, (select string_agg(property_id::text, ',' order by ${pageOrder}) from page) as ids, ${GENERATION} as generation`, params }
  }
  if (output === 'rows') {
    // One row per document in page order; an empty page still has the row carrying the count.
    return {
      text: `with ${ctes}, head as (select ${count}::int as count, ${GENERATION} as generation)
select head.count, head.generation, c.property_id, c.doc::text from head left join (page join catalogue_entries c using (property_id)) on true order by ${docOrder}`,
      params,
    }
  }
  const agg = `select string_agg(c.doc::text, ',' order by ${docOrder}) from page join catalogue_entries c using (property_id)`
  return { text: `with ${ctes}\nselect ${count}::int as count, (${agg}) as data`, params }
}

/**
 * The list statement of a map rectangle alone: catalogue_box_page (migration 0023) returns the
 * total and the page's ids in order.
 */
function boxPageSql(q: CatalogueListQuery, output: ListOutput): { text: string; params: unknown[] } {
  const area = q.areas![0]
  if (area.kind !== 'box') throw new Error('boxPageSql: not a box')
  const { west, south, east, north } = area.box
  const params: unknown[] = [q.businessId, west, south, east, north, q.limit, q.offset]
  return pageFunctionSql('catalogue_box_page($1, $2::float8, $3::float8, $4::float8, $5::float8, $6::int, $7::int)', params, output)
}

/**
 * The list statement of one operation's price range alone in the default order:
 * catalogue_price_range_page (migration 0024) returns the total and the page's ids in order.
 */
function priceRangePageSql(q: CatalogueListQuery, output: ListOutput): { text: string; params: unknown[] } {
  const op = countedPriceRange(q)
  if (!op) throw new Error('priceRangePageSql: not a counted price range')
  const params: unknown[] = [q.businessId, op, q.minPrice ?? null, q.maxPrice ?? null, q.limit, q.offset]
  return pageFunctionSql('catalogue_price_range_page($1, $2::text, $3::float8, $4::float8, $5::int, $6::int)', params, output)
}

/**
 * The list statement around a function returning `total` and the page's `ids` in order ($1 being
 * the business): the documents are joined to the ids in that order (`ord`).
 */
function pageFunctionSql(call: string, params: unknown[], output: ListOutput): { text: string; params: unknown[] } {
  const ctes = `found as (select total, ids from ${call}),
page as (select u.property_id, u.ord from found, unnest(found.ids) with ordinality as u(property_id, ord))`
  const count = '(select total from found)'
  if (output === 'ids') {
    return { text: `with ${ctes}\nselect ${count}::int as count, (select nullif(array_to_string(ids, ','), '') from found) as ids, ${GENERATION} as generation`, params }
  }
  if (output === 'rows') {
    return {
      text: `with ${ctes}, head as (select ${count}::int as count, ${GENERATION} as generation)
select head.count, head.generation, c.property_id, c.doc::text from head left join (page join catalogue_entries c using (property_id)) on true order by page.ord`,
      params,
    }
  }
  const agg = `select string_agg(c.doc::text, ',' order by page.ord) from page join catalogue_entries c using (property_id)`
  return { text: `with ${ctes}\nselect ${count}::int as count, (${agg}) as data`, params }
}

/**
 * What the list statement returns: `page`, the count and the documents joined by `,` in one
 * value; `ids`, the count and the page's ids in order, read from indexes alone (the documents
 * then come from the page cache); `rows`, one row per document with its id, to fill that cache.
 */
export type ListOutput = 'page' | 'ids' | 'rows'

const NO_BYTES = new Uint8Array(0)

/** The business's catalogue generation (migration 0018), read in the statement's own snapshot; 0 before its first row. */
const GENERATION = 'coalesce((select generation from catalogue_counts where business_id = $1), 0)'

/** A page of the list as PostgreSQL answered it. */
export interface CataloguePageRows {
  count: number
  data: Uint8Array
}

const num = (b: Buffer) => Number(b.toString('latin1'))

/**
 * One page: the total and the docs joined by `,`, as the UTF-8 bytes PostgreSQL sent. A page of
 * 100 listings is ~85 KB: read raw, it is never decoded into a string only to be encoded back
 * into the response.
 */
export async function listCatalogue(sql: Sql, q: CatalogueListQuery, mode: CountMode = defaultCountMode(q)): Promise<CataloguePageRows> {
  const { text, params } = catalogueListSql(q, mode)
  const [[count, data]] = (await sql.unsafe(text, params as never[]).raw()) as unknown as [Buffer, Buffer | null][]
  return { count: num(count), data: data ?? NO_BYTES }
}

/** The page's ids in order, its total and the generation, without reading a document. */
export async function listCatalogueIds(sql: Sql, q: CatalogueListQuery): Promise<{ count: number; ids: number[]; generation: number }> {
  const { text, params } = catalogueListSql(q, defaultCountMode(q), 'ids')
  const [[count, ids, generation]] = (await sql.unsafe(text, params as never[]).raw()) as unknown as [Buffer, Buffer | null, Buffer][]
  return { count: num(count), ids: ids ? ids.toString('latin1').split(',').map(Number) : [], generation: num(generation) }
}

/** The page with each document on its own (UTF-8 bytes), its total and the generation. */
export async function listCatalogueRows(sql: Sql, q: CatalogueListQuery): Promise<{ count: number; docs: [number, Uint8Array][]; generation: number }> {
  const { text, params } = catalogueListSql(q, defaultCountMode(q), 'rows')
  const rows = (await sql.unsafe(text, params as never[]).raw()) as unknown as [Buffer, Buffer, Buffer | null, Buffer | null][]
  const docs: [number, Uint8Array][] = []
  for (const [, , id, doc] of rows) if (id && doc) docs.push([num(id), doc])
  return { count: num(rows[0][0]), docs, generation: num(rows[0][1]) }
}

/** Documents of published listings of the business by id (those still published), with the generation they were read at. */
export async function catalogueDocs(sql: Sql, businessId: number, ids: number[]): Promise<{ docs: Map<number, Uint8Array>; generation: number }> {
  const rows = (await sql
    .unsafe(
      `select g.generation, c.property_id, c.doc::text from (select ${GENERATION} as generation) g
left join catalogue_entries c on c.business_id = $1 and c.property_id = any($2::int[])`,
      [businessId, `{${ids.map((id) => Math.trunc(id)).join(',')}}`] as never[],
    )
    .raw()) as unknown as [Buffer, Buffer | null, Buffer | null][]
  const docs = new Map<number, Uint8Array>()
  for (const [, id, doc] of rows) if (id && doc) docs.set(num(id), doc)
  return { docs, generation: num(rows[0][0]) }
}

/** The business's catalogue generation now: any catalogue write of the business since a page was read has moved it. */
export async function catalogueGeneration(sql: Sql, businessId: number): Promise<number> {
  const [[generation]] = (await sql.unsafe(`select ${GENERATION}`, [businessId]).raw()) as unknown as [Buffer][]
  return num(generation)
}

/** The catalogue version of a business: it moves with every transaction that changes its public catalogue. */
export interface CatalogueVersion {
  version: number
  /** When the version last moved (before any change: when the business, or the column, was created). */
  changedAt: Date
}

/** The business's catalogue version (the feed's ETag and Last-Modified); an unknown business reads as version 0 at the epoch. */
export async function catalogueVersionOf(db: Db, businessId: number): Promise<CatalogueVersion> {
  const [row] = await db.select({ version: businesses.catalogueVersion, changedAt: businesses.catalogueChangedAt }).from(businesses).where(eq(businesses.id, businessId))
  return row ?? { version: 0, changedAt: new Date(0) }
}
