/**
 * Idempotency-Key on the media creates (contract §15: image and video uploads, imports, and the
 * video link): a replay is the first answer byte for byte with `Idempotent-Replayed: true` and
 * creates nothing; the same key with another body is a 409.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createProperty } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const videosOf = async (propertyId: number) =>
  Number((await ctx.deps.database.db.execute<{ n: number }>(sql`select count(*)::int as n from property_videos where property_id = ${propertyId}`))[0].n)

test.each([
  ['createVideoUpload', 'videos/uploads', { filename: 'a.mp4', content_type: 'video/mp4', size: 1000 }, 201],
  ['createVideoLink', 'videos', { url: 'https://vimeo.com/76979871' }, 201],
] as const)('%s: a replay is the first answer, byte for byte; another body under the key is a 409', async (_name, path, body, status) => {
  const propertyId = await createProperty(ctx, biz.apiKey)
  const send = (b: unknown) =>
    call(ctx.app, 'POST', `/v1/properties/${propertyId}/${path}`, { key: biz.apiKey, body: b, headers: { 'idempotency-key': `k-${propertyId}` } })
  const first = await send(body)
  expect(first.status, first.text).toBe(status)
  const again = await send(body)
  expect(again.status).toBe(status)
  expect(again.headers.get('idempotent-replayed')).toBe('true')
  expect(again.text).toBe(first.text)
  expect(await videosOf(propertyId)).toBe(1)
  const conflict = await send({ ...body, title: 'otro' })
  expect(conflict.status).toBe(409)
  expect(await videosOf(propertyId)).toBe(1)
})

test('a refused import (another business’s property) is replayed as the same 404', async () => {
  const other = await seedBusiness(ctx)
  const propertyId = await createProperty(ctx, other.apiKey)
  const send = () =>
    call(ctx.app, 'POST', `/v1/properties/${propertyId}/images/imports`, {
      key: biz.apiKey,
      body: { images: [{ url: 'https://example.com/a.jpg' }] },
      headers: { 'idempotency-key': 'refused-import' },
    })
  const first = await send()
  expect(first.status).toBe(404)
  const again = await send()
  expect(again.status).toBe(404)
  expect(again.headers.get('idempotent-replayed')).toBe('true')
  expect(again.text).toBe(first.text)
})
