/**
 * How a list counts its matches (docs/properties.md "Count modes"): a trigger-kept counter
 * (catalogue_counts), the price buckets of one operation's range (catalogue_price_counts), the
 * map cells of a rectangle (catalogue_geo_cells), or the matches themselves. The functions of
 * db/functions/catalogue-price-buckets.sql and catalogue-geo-cells.sql answer the two shapes whose
 * total and page they compute together.
 */
import { GENERATION, operationLiteral, type CatalogueListQuery, type ListOutput, type SqlStatement } from './statement'

export type CountMode = 'separate' | 'materialized' | 'box' | 'price-range' | 'bounded'

/** Whether the query filters on a column other than the operation and the price, or searches. */
export const filtersOtherColumns = (q: CatalogueListQuery) =>
  [q.status, q.rentalKind, q.type, q.subtypeKey, q.cityLc, q.minBedrooms, q.isFeatured, q.search].some((v) => v !== undefined)

/** Whether the query filters on anything besides its business, its operation and its price range. */
const filtersBeyondOperationAndPrice = (q: CatalogueListQuery) => filtersOtherColumns(q) || Boolean(q.areas?.length)

/**
 * The total of one operation's price range and nothing else, from catalogue_price_counts: the
 * buckets wholly inside the range, plus the listings of the range in the minimum's bucket and in
 * the maximum's, counted from the price index (one bucket at each edge; a narrow or huge range is
 * counted directly). catalogue_price_range_count (db/functions/catalogue-price-buckets.sql) holds
 * the widths, the argument for exactness, and the queries, which the server plans once per
 * connection: as sub-selects of this statement they were planned on every request, 1.2 ms of its
 * 1.6 ms. Undefined for any query countedPriceRange refuses (counted directly).
 */
function priceRangeCount(q: CatalogueListQuery, refs: { min?: string; max?: string }): string | undefined {
  const op = countedPriceRange(q)
  if (!op) return undefined
  return `select catalogue_price_range_count($1, '${operationLiteral(op)}', ${refs.min ?? 'null'}::float8, ${refs.max ?? 'null'}::float8)`
}

/** The operation of a query whose total the price buckets give: one operation's price range, nothing else. */
export function countedPriceRange(q: CatalogueListQuery): string | undefined {
  if (q.priceOperation === undefined || (q.minPrice === undefined && q.maxPrice === undefined)) return undefined
  return filtersBeyondOperationAndPrice(q) ? undefined : q.priceOperation
}

/**
 * The total of the query. The business alone, or the business and one operation, are read from
 * the trigger-kept catalogue_counts row (db/functions/catalogue-counts.sql; same transaction as the rows, so
 * read-your-writes holds); one operation's price range from the price buckets; anything else is
 * counted.
 */
export function countStatement(q: CatalogueListQuery, where: string, priceRefs: { min?: string; max?: string }): string {
  const onlyOperation = !filtersBeyondOperationAndPrice(q) && priceRefs.min === undefined && priceRefs.max === undefined
  if (onlyOperation && q.operations === undefined) return 'select coalesce((select entries from catalogue_counts where business_id = $1), 0)'
  // catalogue_counts has a column per operation, named as the operation.
  const op = q.operations?.length === 1 ? operationLiteral(q.operations[0]) : undefined
  if (onlyOperation && op) return `select coalesce((select ${op} from catalogue_counts where business_id = $1), 0)`
  return priceRangeCount(q, priceRefs) ?? `select count(*) from catalogue_entries where ${where}`
}

/**
 * A rectangle drawn on a map (a polygon that is its box) and nothing else, in the default order:
 * catalogue_box_page (db/functions/catalogue-geo-cells.sql) counts it from catalogue_geo_cells and picks the cheaper way
 * to its page.
 */
export const onlyABox = (q: CatalogueListQuery) =>
  q.areas?.length === 1 &&
  q.areas[0].kind === 'box' &&
  q.operations === undefined &&
  q.minPrice === undefined &&
  q.maxPrice === undefined &&
  !q.sort &&
  !filtersOtherColumns(q)

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
 * The list statement of a map rectangle alone: catalogue_box_page (db/functions/catalogue-geo-cells.sql) returns the
 * total and the page's ids in order.
 */
export function boxPageSql(q: CatalogueListQuery, output: ListOutput): SqlStatement {
  const area = q.areas?.[0]
  if (area?.kind !== 'box') throw new Error('boxPageSql: not a box')
  const { west, south, east, north } = area.box
  const params: unknown[] = [q.businessId, west, south, east, north, q.limit, q.offset]
  return pageFunctionSql('catalogue_box_page($1, $2::float8, $3::float8, $4::float8, $5::float8, $6::int, $7::int)', params, output)
}

/**
 * The list statement of one operation's price range alone in the default order:
 * catalogue_price_range_page (db/functions/catalogue-price-buckets.sql) returns the total and the page's ids in order.
 */
export function priceRangePageSql(q: CatalogueListQuery, output: ListOutput): SqlStatement {
  const op = countedPriceRange(q)
  if (!op) throw new Error('priceRangePageSql: not a counted price range')
  const params: unknown[] = [q.businessId, op, q.minPrice ?? null, q.maxPrice ?? null, q.limit, q.offset]
  return pageFunctionSql('catalogue_price_range_page($1, $2::text, $3::float8, $4::float8, $5::int, $6::int)', params, output)
}

/**
 * The list statement around a function returning `total` and the page's `ids` in order ($1 being
 * the business): the documents are joined to the ids in that order (`ord`).
 */
export function pageFunctionSql(call: string, params: unknown[], output: ListOutput): SqlStatement {
  const ctes = `found as (select total, ids from ${call}),
page as (select u.property_id, u.ord from found, unnest(found.ids) with ordinality as u(property_id, ord))`
  const count = '(select total from found)'
  if (output === 'ids') {
    return {
      text: `with ${ctes}\nselect ${count}::int as count, (select nullif(array_to_string(ids, ','), '') from found) as ids, ${GENERATION} as generation`,
      params,
    }
  }
  if (output === 'rows') {
    return {
      text: `with ${ctes}, head as (select ${count}::int as count, ${GENERATION} as generation)
select head.count, head.generation, c.property_id, c.doc::text
from head left join (page join catalogue_entries c using (property_id)) on true order by page.ord`,
      params,
    }
  }
  const agg = `select string_agg(c.doc::text, ',' order by page.ord) from page join catalogue_entries c using (property_id)`
  return { text: `with ${ctes}\nselect ${count}::int as count, (${agg}) as data`, params }
}
