import { describe, expect, test } from 'bun:test'
import { catalogueQueryOf, matchOperations, priceColumnFor } from '../../shared/listings/catalogue-filters'
import { catalogueListSql } from '../../db/queries/catalogue/list'

describe('GET /properties query → catalogue query (api-spec §4.3)', () => {
  test('operation: partial, case-insensitive match per operation name', () => {
    expect(matchOperations('ALQ')).toEqual(['alquiler'])
    expect(matchOperations('a')).toEqual(['venta', 'alquiler', 'traspaso'])
    expect(matchOperations('permuta')).toEqual([])
  })

  test('the price column follows the exact operation (rule 2)', () => {
    expect(priceColumnFor('Alquiler')).toBe('price_rent')
    expect(priceColumnFor('traspaso')).toBe('price_transfer')
    expect(priceColumnFor('alq')).toBe('price_sale')
    expect(priceColumnFor(undefined)).toBe('price_sale')
  })

  test('defaults, lower-cased city and the echo with nulls', () => {
    const { query, filters } = catalogueQueryOf(3, { city: 'MADRID', is_featured: false })
    expect(query).toMatchObject({ businessId: 3, limit: 100, offset: 0, cityLc: 'madrid', isFeatured: false, priceColumn: 'price_sale' })
    expect(filters.city).toBe('MADRID')
    expect(filters.is_featured).toBe(false)
    expect(filters.sort).toBeNull()
  })

  test('user values are bound parameters; only the fixed operation names are inlined', () => {
    const { query } = catalogueQueryOf(1, { operation: "venta'; drop table x; --", city: "x'); --", status: "' or 1=1" })
    const { text, params } = catalogueListSql(query)
    expect(text).not.toContain('drop table')
    expect(text).not.toContain('or 1=1')
    expect(text).toContain('false')
    expect(params).toContain("' or 1=1")
    const one = catalogueListSql(catalogueQueryOf(1, { operation: 'venta', city: 'Madrid' }).query).text
    expect(one).toContain("operations @> '{venta}'::text[]")
    // A page of one operation alone passes it to catalogue_recent_page, which refuses any name outside the set.
    expect(catalogueListSql(catalogueQueryOf(1, { operation: 'venta' }).query).params).toEqual([1, 'venta', 100, 0])
  })

  test('no filter, or one operation alone, counts from catalogue_counts; its price range from the buckets; any other filter counts the rows', () => {
    const text = (p: Parameters<typeof catalogueQueryOf>[1]) => catalogueListSql(catalogueQueryOf(1, p).query).text
    // Read straight from an index with its total from the counters (db/functions/catalogue-ordered-pages.sql).
    const sorted = catalogueListSql(catalogueQueryOf(1, { sort: 'price_asc', offset: 10 }).query)
    expect(sorted.text).toContain('catalogue_price_sorted_page($1, $2::text, false, $3::int, $4::int, true)')
    expect(sorted.params).toEqual([1, null, 100, 10])
    expect(text({ operation: 'venta' })).toContain('catalogue_recent_page($1, $2::text, $3::int, $4::int, true)')
    expect(text({ operation: 'venta', sort: 'price_desc' })).toContain('catalogue_price_sorted_page($1, $2::text, true, $3::int, $4::int, true)')
    expect(text({ operation: 'alq', sort: 'price_desc' })).toContain('select alquiler from catalogue_counts')
    expect(text({ operation: 'a' })).toContain('select count(*) from catalogue_entries')
    // In the default order the page comes with its total from catalogue_price_range_page (db/functions/catalogue-price-buckets.sql).
    const rangePage = catalogueListSql(catalogueQueryOf(1, { operation: 'venta', min_price: 1 }).query)
    expect(rangePage.text).toContain('catalogue_price_range_page($1, $2::text, $3::float8, $4::float8, $5::int, $6::int)')
    expect(rangePage.params).toEqual([1, 'venta', 1, null, 100, 0])
    expect(catalogueListSql(catalogueQueryOf(1, { operation: 'alquiler', max_price: 900 }).query).params).toEqual([1, 'alquiler', null, 900, 100, 0])
    expect(text({ operation: 'alquiler', max_price: 900, sort: 'price_desc' })).toContain(
      "catalogue_price_range_count($1, 'alquiler', null::float8, $2::float8)",
    )
    // A narrow range too: catalogue_price_range_count decides how to count it (the widths live in SQL only).
    expect(text({ operation: 'venta', min_price: 100000, max_price: 105000 })).toContain('catalogue_price_range_page(')
    expect(text({ operation: 'a', min_price: 1 })).toContain('select count(*) from catalogue_entries')
    expect(text({ operation: 'alq', min_price: 1 })).toContain('select count(*) from catalogue_entries')
    expect(text({ city: 'Madrid' })).toContain('count(*) from matches')
    expect(text({ operation: 'venta', min_price: 1, sort: 'price_asc' })).toContain("catalogue_price_range_count($1, 'venta', $2::float8, null::float8)")
    expect(text({ operation: 'venta', min_price: 1, city: 'Madrid' })).toContain('count(*) from matches')
  })
})
