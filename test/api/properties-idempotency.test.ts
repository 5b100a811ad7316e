import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { propertyBody } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const count = async (businessId: number) => {
  const [row] = await ctx.deps.database.db.execute<{ n: number }>(sql`select count(*)::int as n from properties where business_id = ${businessId}`)
  return row.n
}
const create = (key: string, idem: string | undefined, body: unknown = propertyBody()) =>
  call(ctx.app, 'POST', '/v1/properties', { key, body, headers: idem === undefined ? {} : { 'idempotency-key': idem } })

describe('Idempotency-Key on POST /properties (api-spec §8)', () => {
  test('a replay returns the original status and body with Idempotent-Replayed, and creates nothing', async () => {
    const b = await seedBusiness(ctx)
    const first = await create(b.apiKey, 'k-1')
    expect(first.status, first.text).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const again = await create(b.apiKey, 'k-1')
    expect(again.status, again.text).toBe(201)
    expect(again.body).toEqual(first.body)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await count(b.id)).toBe(1)
  })

  test('the same key with another body is 409 and creates nothing', async () => {
    const b = await seedBusiness(ctx)
    expect((await create(b.apiKey, 'k-2')).status).toBe(201)
    const other = await create(b.apiKey, 'k-2', propertyBody({ title: 'Otro' }))
    expect(other.status, other.text).toBe(409)
    expect(other.headers.get('content-type')).toContain('application/problem+json')
    expect(await count(b.id)).toBe(1)
  })

  test('keys are scoped to the API key: another key of the same business creates again', async () => {
    const b = await seedBusiness(ctx)
    const second = await b.key(['properties:write'])
    expect((await create(b.apiKey, 'shared')).status).toBe(201)
    expect((await create(second.apiKey, 'shared')).status).toBe(201)
    expect(await count(b.id)).toBe(2)
  })

  test('a refused request is replayed as the same refusal', async () => {
    const b = await seedBusiness(ctx)
    const body = propertyBody({ operations: ['venta', 'alquiler'] })
    const first = await create(b.apiKey, 'bad', body)
    expect(first.status, first.text).toBe(422)
    const again = await create(b.apiKey, 'bad', body)
    expect(again.status).toBe(422)
    expect(again.body.errors).toEqual(first.body.errors)
    expect(await count(b.id)).toBe(0)
  })

  test('without a key every request creates', async () => {
    const b = await seedBusiness(ctx)
    await create(b.apiKey, undefined)
    await create(b.apiKey, undefined)
    expect(await count(b.id)).toBe(2)
  })

  test('an empty key or one over 200 characters is 422', async () => {
    for (const k of ['', 'x'.repeat(201)]) {
      const res = await create(biz.apiKey, k)
      expect(res.status, res.text).toBe(422)
      expect(res.body.errors[0].loc).toEqual(['header', 'idempotency-key'])
    }
    expect((await create(biz.apiKey, 'x'.repeat(200))).status).toBe(201)
  })

  test('20 concurrent identical creates make exactly one property', async () => {
    const b = await seedBusiness(ctx)
    const results = await Promise.all(Array.from({ length: 20 }, () => create(b.apiKey, 'burst')))
    for (const r of results) expect(r.status, r.text).toBe(201)
    const ids = new Set(results.map((r) => r.body.id))
    expect(ids.size).toBe(1)
    expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true').length).toBe(19)
    expect(await count(b.id)).toBe(1)
  })
})
