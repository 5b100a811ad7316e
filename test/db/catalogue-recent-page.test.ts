/**
 * A page with nothing filtered but its operation, in the default order, is answered by
 * catalogue_recent_page (db/functions/catalogue-recent-page.sql): the same total, documents and
 * order as the general list statement, in each of the three forms (the page, the ids and the
 * rows the page cache reads), for every operation, offset and limit, and after a write.
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
  for (const [i, operations] of OPERATIONS.entries()) {
    const pricing = { sale: 100_000 + i, rent: 700 + i, transfer: 30_000 + i }
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

const SHAPES: ListParams[] = [{}, { operation: 'venta' }, { operation: 'alquiler' }, { operation: 'traspaso' }]
const WINDOWS = [
  { limit: 100, offset: 0 },
  { limit: 2, offset: 0 },
  { limit: 2, offset: 3 },
  { limit: 3, offset: 6 },
  { limit: 10, offset: 50 },
]

describe('catalogue_recent_page', () => {
  test('answers the lists with no filter but their operation', () => {
    for (const params of SHAPES) expect(catalogueListSql(queryOf(params)).text).toContain('catalogue_recent_page(')
    // Anything else filtered, sorted or searched is the general statement's.
    for (const params of [{ operation: 'venta', min_price: 1 }, { city: 'Valencia' }, { sort: 'price_asc' }, { q: 'piso' }] as ListParams[]) {
      expect(catalogueListSql(queryOf(params)).text).not.toContain('catalogue_recent_page(')
    }
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
  })
})
