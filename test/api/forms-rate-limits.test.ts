/**
 * A publishable key's limits (contract §16.4), through app.handle against the real Redis: the
 * per-address and per-key limits with 429 and Retry-After, the RateLimit-Policy and RateLimit
 * fields on every answer to a publishable key, nothing stored when refused, a point refused by
 * one limit given back to the other, X-Forwarded-For read only with TRUST_PROXY_HOPS, and the
 * metrics. (test/process/forms-limits-two-apis.test.ts: two API processes share the counts.)
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { LANDING, ingestBody, inquiryBody, publishableKey, stored } from '../helpers/forms'

let ctx: TestContext
let proxied: TestContext
let biz: SeededBusiness

beforeAll(async () => {
  ctx = await createTestContext()
  proxied = await createTestContext({ TRUST_PROXY_HOPS: '1' })
  biz = await seedBusiness(ctx)
})
afterAll(async () => {
  await proxied.close()
  await ctx.close()
})

const ingest = (app: TestContext, key: string, headers: Record<string, string> = {}) =>
  call(app.app, 'POST', '/v1/leads/ingest', { key, body: ingestBody(), headers: { origin: LANDING, ...headers } })
const metric = async (name: string) =>
  Number(new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} (\\d+)$`, 'm').exec((await call(ctx.app, 'GET', '/metrics')).text)?.[1])

describe('limits and their fields', () => {
  test('per client address: 3/min lets three through, then 429 with Retry-After; the fields count down', async () => {
    const key = await publishableKey(ctx, biz.id, { ratePerIp: '3/min', rate: '100/min' })
    const answers = []
    for (let i = 0; i < 3; i++) answers.push(await ingest(ctx, key.apiKey))
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200])
    for (const a of answers) expect(a.headers.get('ratelimit-policy')).toBe('"per-ip";q=3;w=60, "per-key";q=100;w=60')
    expect(answers.map((a) => /"per-ip";r=(\d+);t=(\d+)/.exec(a.headers.get('ratelimit')!)![1])).toEqual(['2', '1', '0'])
    expect(answers.map((a) => /"per-key";r=(\d+)/.exec(a.headers.get('ratelimit')!)![1])).toEqual(['99', '98', '97'])
    const t = Number(/"per-ip";r=\d+;t=(\d+)/.exec(answers[2].headers.get('ratelimit')!)![1])
    expect(t).toBeGreaterThan(0)
    expect(t).toBeLessThanOrEqual(60)

    const before = await stored(ctx, biz.id)
    const refused = await ingest(ctx, key.apiKey)
    expect(refused.status, refused.text).toBe(429)
    expect(refused.headers.get('content-type')).toStartWith('application/problem+json')
    expect(refused.body.type).toEndWith('rate-limited')
    expect(refused.body.detail).toContain('3/min per client address')
    const retryAfter = Number(refused.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(refused.headers.get('ratelimit')).toMatch(/^"per-ip";r=0;t=\d+, "per-key";r=97;t=\d+$/)
    expect(refused.headers.get('access-control-allow-origin')).toBe(LANDING)
    expect(refused.headers.get('access-control-expose-headers')).toContain('Retry-After')
    // Known in this process to be over: refused from memory, the fields naming the limit that refuses.
    const again = await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: key.apiKey, body: inquiryBody(), headers: { origin: LANDING } })
    expect(again.status).toBe(429)
    expect(again.headers.get('ratelimit')).toMatch(/^"per-ip";r=0;t=\d+$/)
    expect(again.headers.get('ratelimit-policy')).toBe('"per-ip";q=3;w=60, "per-key";q=100;w=60')
    expect(await stored(ctx, biz.id)).toEqual(before)
  })

  test('per key: 2/min for the whole key, whatever the addresses (behind a trusted proxy)', async () => {
    const key = await publishableKey(ctx, biz.id, { ratePerIp: '100/min', rate: '2/min' })
    const from = (address: string) => ingest(proxied, key.apiKey, { 'x-forwarded-for': address })
    expect((await from('203.0.113.1')).status).toBe(200)
    expect((await from('203.0.113.2')).status).toBe(200)
    const refused = await from('203.0.113.3')
    expect(refused.status).toBe(429)
    expect(refused.body.detail).toContain('2/min for this key')
    expect(refused.headers.get('ratelimit')).toMatch(/"per-key";r=0;t=\d+/)
  })

  test("a request refused by its address's limit does not use up the key's budget", async () => {
    const key = await publishableKey(ctx, biz.id, { ratePerIp: '2/min', rate: '4/min' })
    const from = (address: string) => ingest(proxied, key.apiKey, { 'x-forwarded-for': address })
    const flood = []
    for (let i = 0; i < 6; i++) flood.push((await from('198.51.100.1')).status)
    expect(flood).toEqual([200, 200, 429, 429, 429, 429])
    // The key's budget (4) lost only the two accepted: two more addresses get theirs.
    expect([(await from('198.51.100.2')).status, (await from('198.51.100.2')).status]).toEqual([200, 200])
    const over = await from('198.51.100.3')
    expect(over.status).toBe(429)
    expect(over.body.detail).toContain('for this key')
  })

  test('every answer to a publishable key carries both fields: success, 422, 403 (origin, scope), 429, GET /me', async () => {
    const key = await publishableKey(ctx, biz.id, { ratePerIp: '5/min', rate: '100/min' })
    const answers = [
      await ingest(ctx, key.apiKey),
      await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: key.apiKey, body: { message: 'x' }, headers: { origin: LANDING } }),
      await ingest(ctx, key.apiKey, { origin: 'https://evil.example' }),
      await call(ctx.app, 'GET', '/v1/leads', { key: key.apiKey }),
      await call(ctx.app, 'GET', '/v1/me', { key: key.apiKey }),
    ]
    expect(answers.map((a) => a.status)).toEqual([200, 422, 403, 403, 200])
    for (const a of answers) {
      expect(a.headers.get('ratelimit-policy')).toBe('"per-ip";q=5;w=60, "per-key";q=100;w=60')
      expect(a.headers.get('ratelimit')).toMatch(/^"per-ip";r=\d+;t=\d+, "per-key";r=\d+;t=\d+$/)
    }
    // The origin refusal was not counted: 4 of 5 requests counted, one left.
    expect(answers[4].headers.get('ratelimit')).toStartWith('"per-ip";r=1;')
    const limited = await ingest(ctx, key.apiKey)
    expect(limited.status).toBe(200)
    expect((await ingest(ctx, key.apiKey)).status).toBe(429)
  })

  test('a secret key has no limit and no fields', async () => {
    for (let i = 0; i < 15; i++) {
      const res = await call(ctx.app, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody() })
      expect(res.status).toBe(200)
      expect(res.headers.get('ratelimit')).toBeNull()
      expect(res.headers.get('ratelimit-policy')).toBeNull()
    }
  })

  test('429s and requests by key kind are counted in /metrics', async () => {
    const key = await publishableKey(ctx, biz.id, { ratePerIp: '1/min' })
    const [limited, publishable, secret] = [
      await metric('rate_limited_total{limit="per-ip"}'),
      await metric('api_key_requests_total{kind="publishable"}'),
      await metric('api_key_requests_total{kind="secret"}'),
    ]
    await ingest(ctx, key.apiKey)
    await ingest(ctx, key.apiKey)
    await call(ctx.app, 'GET', '/v1/me', { key: biz.apiKey })
    expect(await metric('rate_limited_total{limit="per-ip"}')).toBe(limited + 1)
    expect(await metric('api_key_requests_total{kind="publishable"}')).toBe(publishable + 2)
    expect(await metric('api_key_requests_total{kind="secret"}')).toBe(secret + 1)
  })
})

describe('the client address (TRUST_PROXY_HOPS)', () => {
  test('unset: X-Forwarded-For is ignored, every request of one connection peer counts together', async () => {
    const key = await publishableKey(ctx, biz.id, { ratePerIp: '2/min' })
    const statuses = []
    for (const address of ['203.0.113.10', '203.0.113.11', '203.0.113.12'])
      statuses.push((await ingest(ctx, key.apiKey, { 'x-forwarded-for': address })).status)
    expect(statuses).toEqual([200, 200, 429])
  })

  test('TRUST_PROXY_HOPS=1: the right-most address counts; what a client writes to its left does not', async () => {
    const key = await publishableKey(ctx, biz.id, { ratePerIp: '2/min' })
    const from = (xff: string) => ingest(proxied, key.apiKey, { 'x-forwarded-for': xff })
    expect((await from('1.1.1.1, 203.0.113.20')).status).toBe(200)
    expect((await from('2.2.2.2, 203.0.113.20')).status).toBe(200)
    expect((await from('3.3.3.3, 203.0.113.20')).status).toBe(429)
    expect((await from('203.0.113.21')).status).toBe(200)
    // IPv6 clients count by their /64.
    expect((await from('2001:db8:1:2::1')).status).toBe(200)
    expect((await from('2001:db8:1:2::2')).status).toBe(200)
    expect((await from('2001:db8:1:2::3')).status).toBe(429)
  })
})
