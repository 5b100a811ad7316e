/** The list statement of a search (contract §11), bounded by its candidates whatever its matches. */
import { bind, orderOf, pageStatement, searchQuery, whereOf, type CatalogueListQuery, type ListOutput, type SqlStatement } from './statement'

/**
 * Where a search finds its candidates: catalogue_search (migration 0032), the narrow copy of the
 * filter columns and vectors partitioned by business, whose rows of one business stay in a few MB
 * of shared buffers where catalogue_entries spreads them one per heap block (docs/properties.md
 * "Search"). It holds no point and no price-ordered index: a search with an area or a `sort`
 * reads catalogue_entries, walking its spatial or price index.
 */
export const searchTable = (q: CatalogueListQuery) => (q.sort || q.areas?.length ? 'catalogue_entries' : 'catalogue_search')

/**
 * The list statement of a search (contract §11): the matches are taken in the list's order (the
 * most recently updated first, or `sort`'s) and at most `searchBound` + 1 of them are read, into
 * a materialized CTE that the count and the page both read. Without `sort` the first
 * `searchBound` are ranked by relevance, ties by recency. So no statement ranks, counts or
 * fetches more than the bound, whatever the number of matches: the `LIMIT` lets the planner
 * walk an index in the list's order (catalogue_search's recency index, or catalogue_entries'
 * price index with a `sort`) testing each row for a common word, and take the word's posting list
 * from the GIN on (business_id, tsv) for a rare one (searchTable). A count of `searchBound` + 1
 * means "at least the bound".
 */
export function searchPageSql(q: CatalogueListQuery, output: ListOutput): SqlStatement {
  const bound = q.searchBound
  if (bound === undefined) throw new Error('searchPageSql: a search needs its searchBound')
  const params: unknown[] = []
  const { where, searchRef } = whereOf(q, params)
  if (searchRef === undefined) throw new Error('searchPageSql: a search needs its q')
  const limit = `${bind(params, q.limit)}::int`
  const offset = `${bind(params, q.offset)}::int`
  const candidates = `${bind(params, bound)}::int`
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
    ctes = `matches as materialized (select property_id, updated_at, tsv from ${searchTable(q)} where ${where} order by ${order} limit ${candidates} + 1),
ranked as (select property_id, updated_at, ts_rank(tsv, ${searchQuery(searchRef)}) as rank from matches order by ${order} limit ${candidates}),
page as (select * from ranked order by ${orderOf(q, '', 'rank')} limit ${limit} offset ${offset})`
    pageOrder = orderOf(q, '', 'rank')
    docOrder = orderOf(q, 'c.', 'page.rank')
  }
  return pageStatement(ctes, '(select count(*) from matches)', pageOrder, docOrder, output, params)
}
