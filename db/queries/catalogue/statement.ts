/**
 * What a catalogue list statement is made of: the query it answers (the filters of api-spec §4.3
 * and contract §11), its WHERE and ORDER BY as SQL text with $n placeholders, and the statement
 * around the CTEs that find the page. list.ts picks the statement; search.ts and counts.ts build
 * theirs from these parts.
 */

/** A statement's text with $n placeholders and their values, sent unprepared. */
export interface SqlStatement {
  text: string
  params: unknown[]
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
  /**
   * Operations the `operation` filter matched (maybe none → nothing matches); undefined = no
   * filter. Names of the caller's fixed set (shared/listings OPERATIONS), inlined as literals.
   */
  operations?: string[]
  /**
   * The one operation filtered when `priceColumn` is its price (`operation=alquiler`, not `a`):
   * its price buckets can count a price range.
   */
  priceOperation?: string
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

/**
 * The tsquery of `search`: catalogue_search_query (db/functions/catalogue-search.sql) parses it with
 * websearch_to_tsquery in Spanish and in English, both unaccented, so any text is a valid query.
 * The statement is planned with its value, so PostgreSQL folds this into a constant tsquery that
 * catalogue_business_tsv_gin answers together with business_id.
 */
export const searchQuery = (ref: string) => `catalogue_search_query(${ref}::text)`

/**
 * WHERE of the list, as SQL text with $n placeholders, and the placeholder holding the search
 * text (when there is one). Operations are inlined as literals from the fixed set (never user
 * text) so the planner can match the per-operation partial price indexes (catalogue_<op>_*_idx).
 */
/** An operation name as the literal it is inlined as: a plain lower-case word, else a programming error. */
export function operationLiteral(name: string): string {
  if (!/^[a-z]+$/.test(name)) throw new Error(`operation ${JSON.stringify(name)} is not a plain name`)
  return name
}

/** Appends a parameter and returns its placeholder (`$n`). */
export function bind(params: unknown[], value: unknown): string {
  params.push(value)
  return `$${params.length}`
}

export function whereOf(q: CatalogueListQuery, params: unknown[]): { where: string; searchRef?: string; priceRefs: { min?: string; max?: string } } {
  const p = (value: unknown) => bind(params, value)
  const parts = [`business_id = ${p(q.businessId)}`]
  if (q.operations !== undefined) {
    const ops = q.operations.map(operationLiteral)
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
  if (q.minPrice !== undefined) {
    priceRefs.min = p(q.minPrice)
    parts.push(`${q.priceColumn} >= ${priceRefs.min}::float8`)
  }
  if (q.maxPrice !== undefined) {
    priceRefs.max = p(q.maxPrice)
    parts.push(`${q.priceColumn} <= ${priceRefs.max}::float8`)
  }
  if (q.minBedrooms !== undefined) parts.push(`bedrooms >= ${p(q.minBedrooms)}::int`)
  if (q.isFeatured !== undefined) parts.push(`is_featured = ${p(q.isFeatured)}::boolean`)
  let searchRef: string | undefined
  if (q.search !== undefined) {
    searchRef = p(q.search)
    parts.push(`tsv @@ ${searchQuery(searchRef)}`)
  }
  if (q.areas?.length) {
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
export function orderOf(q: CatalogueListQuery, alias = '', rankRef?: string): string {
  const price = `${alias}${q.priceColumn}`
  if (q.sort === 'price_asc') return `${price} asc nulls last, ${alias}property_id desc nulls last`
  if (q.sort === 'price_desc') return `${price} desc nulls last, ${alias}property_id desc nulls last`
  const recent = `${alias}updated_at desc nulls last, ${alias}property_id desc nulls last`
  return rankRef ? `${rankRef} desc, ${recent}` : recent
}

/**
 * What the list statement returns: `page`, the count and the documents joined by `,` in one
 * value; `ids`, the count and the page's ids in order, read from indexes alone (the documents
 * then come from the page cache); `rows`, one row per document with its id, to fill that cache.
 */
export type ListOutput = 'page' | 'ids' | 'rows'

/** The business's catalogue generation (catalogue_counts, db/functions/catalogue-counts.sql), read in the statement's own snapshot; 0 before its first row. */
export const GENERATION = 'coalesce((select generation from catalogue_counts where business_id = $1), 0)'

/** The statement around CTEs ending in `page` (the page's `property_id`s) and the SQL of its `count`. */
export function pageStatement(ctes: string, count: string, pageOrder: string, docOrder: string, output: ListOutput, params: unknown[]): SqlStatement {
  if (output === 'ids') {
    return {
      text: `with ${ctes}\nselect ${count}::int as count, (select string_agg(property_id::text, ',' order by ${pageOrder}) from page) as ids,
  ${GENERATION} as generation`,
      params,
    }
  }
  if (output === 'rows') {
    // One row per document in page order; an empty page still has the row carrying the count.
    return {
      text: `with ${ctes}, head as (select ${count}::int as count, ${GENERATION} as generation)
select head.count, head.generation, c.property_id, c.doc::text
from head left join (page join catalogue_entries c using (property_id)) on true order by ${docOrder}`,
      params,
    }
  }
  const agg = `select string_agg(c.doc::text, ',' order by ${docOrder}) from page join catalogue_entries c using (property_id)`
  return { text: `with ${ctes}\nselect ${count}::int as count, (${agg}) as data`, params }
}
