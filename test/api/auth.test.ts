import { afterAll, beforeAll, describe, expect, setSystemTime, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { apiKeys } from '../../db/schema'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const expect401 = async (headers: Record<string, string>, detail: RegExp) => {
  const res = await call(ctx.app, 'GET', '/v1/me', { headers })
  expect(res.status, res.text).toBe(401)
  expect(res.headers.get('content-type')).toStartWith('application/problem+json')
  expect(res.body.detail).toMatch(detail)
  expect(res.body.status).toBe(401)
  expect(res.body.request_id).toBe(res.headers.get('x-request-id')!)
}

describe('authentication (api-spec §5)', () => {
  test('X-Api-Key header works', async () => {
    const res = await call(ctx.app, 'GET', '/v1/me', { headers: { 'x-api-key': biz.apiKey } })
    expect(res.status, res.text).toBe(200)
  })

  test('Authorization: ApiKey <key> works', async () => {
    const res = await call(ctx.app, 'GET', '/v1/me', { headers: { authorization: `ApiKey ${biz.apiKey}` } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.data.business.id).toBe(biz.id)
  })

  test('missing key → 401', () => expect401({}, /Missing API key/))
  test('malformed key → 401', () => expect401({ 'x-api-key': 'not-a-key' }, /Malformed/))
  test('malformed Authorization scheme → 401', () => expect401({ authorization: 'Bearer xyz' }, /Malformed/))
  test('unknown key id → 401', () => expect401({ 'x-api-key': 'AC_LIVE_AAAAAAAAAAAAAAAA.' + 'a'.repeat(32) }, /Invalid API key/))
  test('right key id, wrong secret → 401', () => expect401({ 'x-api-key': `AC_LIVE_${biz.keyId}.${'b'.repeat(32)}` }, /Invalid API key/))
  test('a wrong secret right after the right one (the key cached and its secret proven) → 401', async () => {
    const ok = await call(ctx.app, 'GET', '/v1/me', { headers: { 'x-api-key': biz.apiKey } })
    expect(ok.status, ok.text).toBe(200)
    const secret = biz.apiKey.slice(biz.apiKey.indexOf('.') + 1)
    const wrong = `${secret.slice(0, -1)}${secret.endsWith('a') ? 'b' : 'a'}`
    await expect401({ 'x-api-key': `AC_LIVE_${biz.keyId}.${wrong}` }, /Invalid API key/)
    expect((await call(ctx.app, 'GET', '/v1/me', { headers: { 'x-api-key': biz.apiKey } })).status).toBe(200)
  })

  test('expired key → 401', async () => {
    const k = await biz.key(['leads:read'], { expiresAt: new Date(Date.now() - 1000) })
    await expect401({ 'x-api-key': k.apiKey }, /expired/)
  })

  // The key cache reads the clock (Date.now): these two set it, so the cache's lifetime and the
  // expiry are crossed exactly where the test says, however slow the machine.
  test('a key that expires while cached is refused from its expiry on', async () => {
    const now = Date.now()
    setSystemTime(now)
    try {
      const k = await biz.key(['leads:read'], { expiresAt: new Date(now + 300) })
      expect((await call(ctx.app, 'GET', '/v1/me', { key: k.apiKey })).status).toBe(200)
      setSystemTime(now + 299)
      expect((await call(ctx.app, 'GET', '/v1/me', { key: k.apiKey })).status).toBe(200)
      // Still within the cache's lifetime: the cached key's own expiry refuses it.
      setSystemTime(now + 300)
      const res = await call(ctx.app, 'GET', '/v1/me', { key: k.apiKey })
      expect(res.status).toBe(401)
      expect(res.body.detail).toMatch(/expired/)
    } finally {
      setSystemTime()
    }
  })

  test('revoked key → 401 within 1 s, even while cached', async () => {
    const now = Date.now()
    setSystemTime(now)
    try {
      const k = await biz.key(['leads:read'])
      expect((await call(ctx.app, 'GET', '/v1/me', { key: k.apiKey })).status).toBe(200)
      await ctx.deps.database.db.update(apiKeys).set({ revokedAt: sql`now()` }).where(eq(apiKeys.keyId, k.keyId))
      setSystemTime(now + 999)
      const res = await call(ctx.app, 'GET', '/v1/me', { key: k.apiKey })
      expect(res.status).toBe(401)
      expect(res.body.detail).toMatch(/revoked/)
    } finally {
      setSystemTime()
    }
  })

  test('authentication comes before routing and validation', async () => {
    const res = await call(ctx.app, 'GET', '/v1/properties/abc', {})
    expect(res.status, res.text).toBe(401)
  })

  test('last_used_at is written in batches, not per request', async () => {
    const k = await biz.key(['leads:read'])
    for (let i = 0; i < 5; i++) await call(ctx.app, 'GET', '/v1/me', { key: k.apiKey })
    const before = await ctx.deps.database.db.select({ t: apiKeys.lastUsedAt }).from(apiKeys).where(eq(apiKeys.keyId, k.keyId))
    expect(before[0].t).toBeNull()
    await ctx.deps.keys.flush()
    const after = await ctx.deps.database.db.select({ t: apiKeys.lastUsedAt }).from(apiKeys).where(eq(apiKeys.keyId, k.keyId))
    expect(after[0].t).toBeInstanceOf(Date)
  })
})

describe('scopes', () => {
  test('GET /me needs no scope', async () => {
    const k = await biz.key(['leads:ingest'])
    const res = await call(ctx.app, 'GET', '/v1/me', { key: k.apiKey })
    expect(res.status, res.text).toBe(200)
    expect(res.body.data.api_key.scopes).toEqual(['leads:ingest'])
  })
})
