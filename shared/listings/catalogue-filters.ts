/**
 * GET /properties query → what the catalogue query filters on, plus the `filters` echo
 * (api-spec §4.3, contract §3.4/§8, §11). Values were already type-checked by the route schema;
 * `q` is searched and echoed exactly as received (contract §15).
 */
import type { Static } from '@sinclair/typebox'
import type { CatalogueListQuery, PriceColumn } from '../../db/queries/catalogue/statement'
import { fieldError } from '../platform/errors'
import { parseLocations, toSqlArea } from './geo'
import { OPERATIONS, type ListFilters, type PropertyListQuery } from './schemas'

export type ListParams = Static<typeof PropertyListQuery>

/** api-spec §4.3 rule 2: the price that `min_price`, `max_price` and `sort` read. */
export function priceColumnFor(operation: string | undefined): PriceColumn {
  const op = operation?.toLowerCase()
  return op === 'alquiler' ? 'price_rent' : op === 'traspaso' ? 'price_transfer' : 'price_sale'
}

/** Case-insensitive partial match against each operation name (`alq` → alquiler, `a` → all three). */
export function matchOperations(operation: string): string[] {
  const needle = operation.toLowerCase()
  return OPERATIONS.filter((o) => o.includes(needle))
}

/**
 * Contract §11: a search ranks, counts and pages at most this many matches; `count` past it is
 * this number with `count_relation: "gte"`. Without `q` nothing is bounded (§15).
 */
export const SEARCH_BOUND = 1000

/** `count` and its `count_relation` as answered: a search's count past its bound is the bound, "gte". */
export function countAnswer(query: CatalogueListQuery, count: number): { count: number; relation: 'eq' | 'gte' } {
  return query.search !== undefined && count > SEARCH_BOUND ? { count: SEARCH_BOUND, relation: 'gte' } : { count, relation: 'eq' }
}

export function catalogueQueryOf(businessId: number, p: ListParams): { query: CatalogueListQuery; filters: ListFilters } {
  const limit = p.limit ?? 100
  const offset = p.offset ?? 0
  if (p.q !== undefined && offset + limit > SEARCH_BOUND) {
    throw fieldError(['query', 'offset'], `with q, offset + limit may not pass ${SEARCH_BOUND.toLocaleString('en')}`)
  }
  const areas = parseLocations(p.locations)
  const operations = p.operation === undefined ? undefined : matchOperations(p.operation)
  const priceColumn = priceColumnFor(p.operation)
  const query: CatalogueListQuery = {
    businessId,
    limit,
    offset,
    status: p.status,
    operations,
    priceOperation: operations?.length === 1 && priceColumnFor(operations[0]) === priceColumn ? operations[0] : undefined,
    priceColumn,
    rentalKind: p.rental_type,
    type: p.type,
    subtypeKey: p.subtype,
    cityLc: p.city?.toLowerCase(),
    areas: areas?.length ? areas.map(toSqlArea) : undefined,
    minPrice: p.min_price,
    maxPrice: p.max_price,
    minBedrooms: p.min_bedrooms,
    isFeatured: p.is_featured,
    search: p.q,
    searchBound: p.q === undefined ? undefined : SEARCH_BOUND,
    sort: p.sort,
  }
  const filters: ListFilters = {
    status: p.status ?? null,
    operation: p.operation ?? null,
    rental_type: p.rental_type ?? null,
    type: p.type ?? null,
    subtype: p.subtype ?? null,
    city: p.city ?? null,
    locations: areas,
    min_price: p.min_price ?? null,
    max_price: p.max_price ?? null,
    min_bedrooms: p.min_bedrooms ?? null,
    is_featured: p.is_featured ?? null,
    sort: p.sort ?? null,
    q: p.q ?? null,
  }
  return { query, filters }
}
