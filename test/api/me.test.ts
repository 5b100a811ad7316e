import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx, { scopes: ['leads:ingest'] })
})
afterAll(() => ctx.close())

describe('GET /v1/me', () => {
  test('returns the business and the key, whatever its scopes', async () => {
    const res = await call(ctx.app, 'GET', '/v1/me', { key: biz.apiKey })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({
      status: 'ok',
      data: {
        business: { id: biz.id, name: biz.name },
        api_key: { key_id: biz.keyId, name: 'test', scopes: ['leads:ingest'], kind: 'secret', created_at: expect.any(String), expires_at: null },
      },
      authenticated_as: biz.name,
    })
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('x-request-id')).toBeTruthy()
  })
})
