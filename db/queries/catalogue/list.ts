/**
 * One page of the public catalogue in one statement (architecture.md "Data"): the statement is
 * picked by the query's shape (a search, a map rectangle alone, one operation's price range alone,
 * a page read straight from the recency or a price index with at most its operation filtered, or
 * the general filter), and read as the bytes PostgreSQL sent.
 */
import type { Sql } from '../../client'
import { queryInlinedRaw } from '../../inline-values'
import { boxPageSql, countStatement, defaultCountMode, filtersOtherColumns, pageFunctionSql, priceRangePageSql, type CountMode } from './counts'
import { searchPageSql } from './search'
import { bind, GENERATION, orderOf, pageStatement, whereOf, type CatalogueListQuery, type ListOutput, type SqlStatement } from './statement'

/**
 * Where the page of a list with no filter but its operation, in the default order, is walked
 * from. catalogue_search (migration 0032) holds a business's rows in its own partition, so its
 * recency index (one per operation too) and visibility map are the business's alone; in
 * catalogue_entries the business's rows are spread over the whole table, and every index-only
 * step checks another page of the visibility map: at 1M listings, 16 clients walking the same
 * offsets contend on those few map pages (pgbench, the ids of offsets 5,000–8,900: 924
 * statements/s from catalogue_entries, 2,560 from catalogue_search; at 20k 2,437 and 3,167). Any
 * other filter is answered index-only by catalogue_entries' indexes (its recency index INCLUDEs
 * the filter columns, the city index, the GiST), which the copy's would answer from its heap.
 */
export const defaultOrderPageTable = (q: CatalogueListQuery) =>
  q.sort || filtersOtherColumns(q) || q.areas?.length || q.minPrice !== undefined || q.maxPrice !== undefined ? 'catalogue_entries' : 'catalogue_search'

/**
 * The call of db/functions/catalogue-ordered-pages.sql that answers a page read straight from an
 * index in its order with nothing filtered but at most one operation (its total from the
 * counters), or undefined for any other page: catalogue_recent_page for the default order (the
 * pages defaultOrderPageTable sends to catalogue_search), catalogue_price_sorted_page for a
 * price sort whose price is its operation's (`operation=alquiler&sort=price_asc` sorts by the
 * rent; `operation=alq` matches alquiler but sorts by the sale price, and stays a statement).
 */
function orderedPageCall(q: CatalogueListQuery): ((docs: boolean) => string) | undefined {
  const args = (docs: boolean) => `$1, $2::text, ${q.sort ? `${q.sort === 'price_desc'}, ` : ''}$3::int, $4::int, ${docs}`
  if (!q.sort) {
    const table = defaultOrderPageTable(q)
    if (table !== 'catalogue_search' || (q.operations !== undefined && q.operations.length !== 1)) return undefined
    return (docs) => `catalogue_recent_page(${args(docs)})`
  }
  if (filtersOtherColumns(q) || q.areas?.length || q.minPrice !== undefined || q.maxPrice !== undefined) return undefined
  if (q.operations !== undefined && q.priceOperation === undefined) return undefined
  return (docs) => `catalogue_price_sorted_page(${args(docs)})`
}

/**
 * The list statement of such a page: the function, whose statements the server parses once per
 * connection, returns the total, the ids and (for the page itself) the documents.
 */
function orderedPageSql(q: CatalogueListQuery, call: (docs: boolean) => string, output: ListOutput): SqlStatement {
  const params: unknown[] = [q.businessId, q.operations?.[0] ?? null, q.limit, q.offset]
  if (output === 'page') return { text: `select total::int as count, data from ${call(true)}`, params }
  return pageFunctionSql(call(false), params, output)
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
export function catalogueListSql(q: CatalogueListQuery, mode: CountMode = defaultCountMode(q), output: ListOutput = 'page'): SqlStatement {
  if (mode === 'box') return boxPageSql(q, output)
  if (mode === 'price-range') return priceRangePageSql(q, output)
  if (mode === 'bounded' || q.search !== undefined) return searchPageSql(q, output)
  const ordered = mode === 'separate' ? orderedPageCall(q) : undefined
  if (ordered) return orderedPageSql(q, ordered, output)
  const params: unknown[] = []
  const { where, priceRefs } = whereOf(q, params)
  const countSql = countStatement(q, where, priceRefs)
  const limit = `${bind(params, q.limit)}::int`
  const offset = `${bind(params, q.offset)}::int`
  const cols = q.sort ? `property_id, ${q.priceColumn}` : 'property_id, updated_at'
  const pageOrder = orderOf(q)
  let ctes: string
  let count: string
  if (mode === 'materialized') {
    ctes = `matches as materialized (select ${cols} from catalogue_entries where ${where}),
page as (select * from matches order by ${pageOrder} limit ${limit} offset ${offset})`
    count = '(select count(*) from matches)'
  } else {
    ctes = `page as (select ${cols} from ${defaultOrderPageTable(q)} where ${where} order by ${pageOrder} limit ${limit} offset ${offset})`
    count = `(${countSql})`
  }
  return pageStatement(ctes, count, pageOrder, orderOf(q, 'c.'), output, params)
}

const NO_BYTES = new Uint8Array(0)

/** A page of the list as PostgreSQL answered it. */
export interface CataloguePageRows {
  count: number
  data: Uint8Array
}

const num = (b: Buffer) => Number(b.toString('latin1'))

/**
 * The rows of a statement as the bytes PostgreSQL sent, one Buffer per column (null for NULL),
 * typed by the caller's columns: postgres.js types `.raw()` as parsed rows, which it is not. The
 * values go written into the statement (db/inline-values.ts): one round trip instead of two.
 */
async function rawRows<Row extends (Buffer | null)[]>(sql: Sql, text: string, params: unknown[]): Promise<Row[]> {
  return (await queryInlinedRaw(sql, text, params)) as unknown as Row[]
}

/**
 * One page: the total and the docs joined by `,`, as the UTF-8 bytes PostgreSQL sent. A page of
 * 100 listings is ~85 KB: read raw, it is never decoded into a string only to be encoded back
 * into the response.
 */
export async function queryCataloguePage(sql: Sql, q: CatalogueListQuery, mode: CountMode = defaultCountMode(q)): Promise<CataloguePageRows> {
  const { text, params } = catalogueListSql(q, mode)
  const [[count, data]] = await rawRows<[Buffer, Buffer | null]>(sql, text, params)
  return { count: num(count), data: data ?? NO_BYTES }
}

/** The page's ids in order, its total and the generation, without reading a document. */
export async function listCatalogueIds(sql: Sql, q: CatalogueListQuery): Promise<{ count: number; ids: number[]; generation: number }> {
  const { text, params } = catalogueListSql(q, defaultCountMode(q), 'ids')
  const [[count, ids, generation]] = await rawRows<[Buffer, Buffer | null, Buffer]>(sql, text, params)
  return { count: num(count), ids: ids ? ids.toString('latin1').split(',').map(Number) : [], generation: num(generation) }
}

/** The page with each document on its own (UTF-8 bytes), its total and the generation. */
export async function listCatalogueRows(sql: Sql, q: CatalogueListQuery): Promise<{ count: number; docs: [number, Uint8Array][]; generation: number }> {
  const { text, params } = catalogueListSql(q, defaultCountMode(q), 'rows')
  const rows = await rawRows<[Buffer, Buffer, Buffer | null, Buffer | null]>(sql, text, params)
  const docs: [number, Uint8Array][] = []
  for (const [, , id, doc] of rows) if (id && doc) docs.push([num(id), doc])
  return { count: num(rows[0][0]), docs, generation: num(rows[0][1]) }
}

/** Documents of published listings of the business by id (those still published), with the generation they were read at. */
export async function catalogueDocs(sql: Sql, businessId: number, ids: number[]): Promise<{ docs: Map<number, Uint8Array>; generation: number }> {
  const rows = await rawRows<[Buffer, Buffer | null, Buffer | null]>(
    sql,
    `select g.generation, c.property_id, c.doc::text from (select ${GENERATION} as generation) g
left join catalogue_entries c on c.business_id = $1 and c.property_id = any($2::int[])`,
    [businessId, `{${ids.map((id) => Math.trunc(id)).join(',')}}`],
  )
  const docs = new Map<number, Uint8Array>()
  for (const [, id, doc] of rows) if (id && doc) docs.set(num(id), doc)
  return { docs, generation: num(rows[0][0]) }
}

/** The business's catalogue generation now: any catalogue write of the business since a page was read has moved it. */
export async function catalogueGeneration(sql: Sql, businessId: number): Promise<number> {
  const [[generation]] = await rawRows<[Buffer]>(sql, `select ${GENERATION}`, [businessId])
  return num(generation)
}

/** The stored public JSON of one published property of this business, as text (no re-serialising). */
export async function getCatalogueDocText(sql: Sql, businessId: number, propertyId: number): Promise<string | null> {
  // Primary key lookup; business_id checked so another workspace's id is "not found".
  const rows = await sql<{ doc: string }[]>`select doc::text as doc from catalogue_entries where property_id = ${propertyId} and business_id = ${businessId}`
  return rows[0]?.doc ?? null
}
