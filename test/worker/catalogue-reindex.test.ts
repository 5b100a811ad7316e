import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Job } from 'bullmq'
import { sql } from 'drizzle-orm'
import { processCatalogueReindex } from '../../worker/processors/catalogue-reindex'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createProperty, createPublished } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const deps = () => ({ config: ctx.config, database: ctx.deps.database, queues: ctx.deps.queues, logger: ctx.deps.logger })
const run = (data: unknown) => processCatalogueReindex(deps(), { data } as Job)
const docOf = async (id: number) => (await ctx.deps.database.db.execute<{ doc: any }>(sql`select doc from catalogue_entries where property_id = ${id}`))[0]?.doc

describe('catalogue-reindex processor', () => {
  test('a property job rebuilds its row from the source tables, twice is the same', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    const expected = await docOf(id)
    await ctx.deps.database.db.execute(sql`update catalogue_entries set doc = '{}' where property_id = ${id}`)
    await run({ propertyId: id })
    expect(await docOf(id)).toEqual(expected)
    await run({ propertyId: id })
    expect(await docOf(id)).toEqual(expected)
  })

  test('an image that became ready appears after the reindex', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    await ctx.deps.database.db.execute(
      sql`insert into property_images (business_id, property_id, original_key, public_url, position, state) values (${biz.id}, ${id}, 'o/k', 'https://cdn.example/x.jpg', 1, 'ready')`,
    )
    await run({ propertyId: id })
    const res = await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: biz.apiKey })
    expect(res.body.data.images).toEqual([{ id: expect.any(String), url: 'https://cdn.example/x.jpg', order: 1, is_primary: false, title: '' }])
  })

  test('a draft or missing property has no row afterwards', async () => {
    const draft = await createProperty(ctx, biz.apiKey)
    await run({ propertyId: draft })
    expect(await docOf(draft)).toBeUndefined()
    await run({ propertyId: 2147483000 })
  })

  test('a batch job rebuilds a slice and queues the next one', async () => {
    const b = await seedBusiness(ctx)
    const ids = [await createPublished(ctx, b.apiKey), await createPublished(ctx, b.apiKey), await createPublished(ctx, b.apiKey)]
    await ctx.deps.database.db.execute(sql`delete from catalogue_entries where business_id = ${b.id}`)
    const first = (await run({ businessId: b.id, afterId: 0, batchSize: 2 })) as { lastId: number }
    expect(first.lastId).toBe(ids[1])
    expect(await docOf(ids[0])).toBeDefined()
    expect(await docOf(ids[2])).toBeUndefined()
    const waiting = await ctx.deps.queues.get('catalogue-reindex').getJobs(['waiting', 'delayed'])
    expect(waiting.map((j) => j.data)).toContainEqual({ businessId: b.id, afterId: ids[1], batchSize: 2 })
    await run({ businessId: b.id, afterId: ids[1], batchSize: 2 })
    expect(await docOf(ids[2])).toBeDefined()
  })

  test('an invalid payload fails permanently', async () => {
    await expect(run({ nope: 1 })).rejects.toThrow('invalid catalogue-reindex payload')
  })
})
