/**
 * catalogue_search, the narrow copy a search reads (migration 0032), holds exactly the filter
 * columns and vector of every catalogue row, kept by catalogue_entries' statement triggers
 * (db/functions/catalogue-search-table.sql) through publish, edit, unpublish, delete and the
 * deletion of a business.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createPublished } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness

beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const COLUMNS = `business_id, property_id, updated_at, status, operations, type, subtype_key, city_lc,
  price_sale, price_rent, price_transfer, bedrooms, is_featured, rental_kind, tsv::text as tsv`

/** The business's rows of a table, in id order, as comparable values. */
async function rowsOf(table: 'catalogue_entries' | 'catalogue_search', businessId: number): Promise<unknown[]> {
  const rows = await ctx.deps.database.db.execute(sql.raw(`select ${COLUMNS} from ${table} where business_id = ${Math.trunc(businessId)} order by property_id`))
  return rows.map((r) => ({ ...r, updated_at: String(r.updated_at) }))
}

async function expectMirrored(businessId: number, rows: number): Promise<void> {
  await eventually(async () => (await rowsOf('catalogue_entries', businessId)).length === rows, { what: `${rows} catalogue rows` })
  expect(await rowsOf('catalogue_search', businessId)).toEqual(await rowsOf('catalogue_entries', businessId))
}

describe('catalogue_search mirrors catalogue_entries', () => {
  test('through publish, edit, unpublish and delete', async () => {
    const [a, b, c] = [
      await createPublished(ctx, biz.apiKey, { title: 'Ático con terraza' }),
      await createPublished(ctx, biz.apiKey, { title: 'Chalet con piscina' }),
      await createPublished(ctx, biz.apiKey),
    ]
    await expectMirrored(biz.id, 3)

    const edited = await call(ctx.app, 'PATCH', `/v1/properties/${a}`, { key: biz.apiKey, body: { title: 'Ático con jardín' } })
    expect(edited.status, edited.text).toBe(200)
    const copiedTsv = async () => ((await rowsOf('catalogue_search', biz.id)) as { property_id: number; tsv: string }[]).find((r) => r.property_id === a)?.tsv
    await eventually(async () => Boolean((await copiedTsv())?.includes('jardin')), { what: 'the edited title in the copy' })
    await expectMirrored(biz.id, 3)

    expect((await call(ctx.app, 'POST', `/v1/properties/${b}/unpublish`, { key: biz.apiKey })).status).toBe(200)
    await expectMirrored(biz.id, 2)
    expect((await call(ctx.app, 'DELETE', `/v1/properties/${c}`, { key: biz.apiKey })).status).toBe(200)
    await expectMirrored(biz.id, 1)
  })

  test('a business deleted takes its copy with it', async () => {
    const gone = await seedBusiness(ctx)
    await createPublished(ctx, gone.apiKey)
    await expectMirrored(gone.id, 1)
    await ctx.deps.database.db.execute(sql`delete from businesses where id = ${gone.id}`)
    expect(await rowsOf('catalogue_search', gone.id)).toEqual([])
  })
})
