/**
 * A page with nothing filtered but its operation, in the default order or sorted by price, is
 * answered by catalogue_recent_page or catalogue_price_sorted_page
 * (db/functions/catalogue-ordered-pages.sql): the same total, documents and order as the general
 * list statement, in each of the three forms (the page, the ids and the rows the page cache
 * reads), for every operation, order, offset and limit, and after a write.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { catalogueListSql, listCatalogueIds, listCatalogueRows, queryCataloguePage } from '../../db/queries/catalogue/list'
import { catalogueQueryOf, type ListParams } from '../../shared/listings/catalogue-filters'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createPublished } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
const OPERATIONS = [['venta'], ['alquiler'], ['venta', 'alquiler'], ['traspaso'], ['venta'], ['alquiler'], ['venta']]

beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  // Prices of each operation's own kind only (a rental has no sale price: last in a sale sort),
  // two equal sale prices (ties by id, descending).
  for (const [i, operations] of OPERATIONS.entries()) {
    const pricing = {
      ...(operations.includes('venta') ? { sale: i === 4 ? 100_000 : 100_000 + ((i * 37) % 11) * 1000 } : {}),
      ...(operations.includes('alquiler') ? { rent: 900 - i * 10 } : {}),
      ...(operations.includes('traspaso') ? { transfer: 30_000 + i } : {}),
    }
    await createPublished(ctx, biz.apiKey, { operations, title: `Piso ${i}`, pricing })
  }
})
afterAll(() => ctx.close())

const queryOf = (params: ListParams) => catalogueQueryOf(biz.id, params).query
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

/** The page from the general statement (its count mode forced), as the function's is compared with. */
async function generalPage(params: ListParams) {
  const page = await queryCataloguePage(ctx.deps.database.sql, queryOf(params), 'materialized')
  return { count: page.count, data: text(page.data) }
}

const SHAPES: ListParams[] = [
  {},
  { operation: 'venta' },
  { operation: 'alquiler' },
  { operation: 'traspaso' },
  { sort: 'price_asc' },
  { sort: 'price_desc' },
  { operation: 'venta', sort: 'price_asc' },
  { operation: 'venta', sort: 'price_desc' },
  { operation: 'alquiler', sort: 'price_asc' },
  { operation: 'alquiler', sort: 'price_desc' },
  { operation: 'traspaso', sort: 'price_desc' },
]
const WINDOWS = [
  { limit: 100, offset: 0 },
  { limit: 2, offset: 0 },
  { limit: 2, offset: 3 },
  { limit: 3, offset: 6 },
  { limit: 10, offset: 50 },
]

describe('catalogue_recent_page and catalogue_price_sorted_page', () => {
  test('answer the lists with no filter but their operation, in the default order or by price', () => {
    for (const params of SHAPES)
      expect(catalogueListSql(queryOf(params)).text).toMatch(params.sort ? /catalogue_price_sorted_page\(/ : /catalogue_recent_page\(/)
    // Anything else filtered or searched, or sorted by a price not its operation's, is the general statement's.
    const others: ListParams[] = [
      { operation: 'venta', min_price: 1 },
      { operation: 'venta', sort: 'price_asc', max_price: 200_000 },
      { city: 'Valencia' },
      { q: 'piso' },
      { operation: 'alq', sort: 'price_asc' },
    ]
    for (const params of others) expect(catalogueListSql(queryOf(params)).text).not.toMatch(/catalogue_(recent|price_sorted)_page\(/)
  })

  test('the page, its total and order are the general statement’s, for every operation and window', async () => {
    for (const shape of SHAPES) {
      for (const window of WINDOWS) {
        const params = { ...shape, ...window }
        const page = await queryCataloguePage(ctx.deps.database.sql, queryOf(params))
        expect({ count: page.count, data: text(page.data) }, JSON.stringify(params)).toEqual(await generalPage(params))
      }
    }
    expect((await generalPage({})).count).toBe(OPERATIONS.length)
    expect((await generalPage({ operation: 'venta' })).count).toBe(4)
  })

  test('the ids and rows forms (the page cache’s) agree with the page', async () => {
    for (const shape of SHAPES) {
      for (const window of WINDOWS) {
        const q = queryOf({ ...shape, ...window })
        const page = JSON.parse(`[${text((await queryCataloguePage(ctx.deps.database.sql, q)).data)}]`) as { id: number }[]
        const ids = await listCatalogueIds(ctx.deps.database.sql, q)
        const rows = await listCatalogueRows(ctx.deps.database.sql, q)
        expect(ids.ids).toEqual(page.map((d) => d.id))
        expect(rows.docs.map(([id]) => id)).toEqual(page.map((d) => d.id))
        expect(rows.count).toBe(ids.count)
        expect(rows.generation).toBe(ids.generation)
      }
    }
  })

  test('a write is seen by the next page (the caller’s snapshot)', async () => {
    const before = await queryCataloguePage(ctx.deps.database.sql, queryOf({ operation: 'traspaso' }))
    const id = await createPublished(ctx, biz.apiKey, { operations: ['traspaso'], title: 'Local nuevo', pricing: { transfer: 45_000 } })
    const after = await queryCataloguePage(ctx.deps.database.sql, queryOf({ operation: 'traspaso' }))
    expect(after.count).toBe(before.count + 1)
    expect((JSON.parse(`[${text(after.data)}]`) as { id: number }[])[0].id).toBe(id)
    expect((await call(ctx.app, 'DELETE', `/v1/properties/${id}`, { key: biz.apiKey })).status).toBe(200)
    expect((await queryCataloguePage(ctx.deps.database.sql, queryOf({ operation: 'traspaso' }))).count).toBe(before.count)
  })

  test('an operation outside the fixed set is refused, never read as no filter', async () => {
    await expect(ctx.deps.database.sql`select * from catalogue_recent_page(${biz.id}, 'compra', 10, 0, true)`).rejects.toThrow(/unknown operation/)
    await expect(ctx.deps.database.sql`select * from catalogue_price_sorted_page(${biz.id}, 'compra', true, 10, 0, true)`).rejects.toThrow(/unknown operation/)
  })
})
