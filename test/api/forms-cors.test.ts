/**
 * CORS and the origin rule (contract §16.2) on the two operations pages call: the preflight and
 * its exact fields, exact origin comparison (scheme, host, port), nothing stored for a refused
 * origin, CORS fields on every answer to a publishable key from its origin and on none to a
 * secret key, and no CORS anywhere else.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { LANDING, ingestBody, inquiryBody, publishableKey, stored } from '../helpers/forms'

let ctx: TestContext
let biz: SeededBusiness
let pub: { apiKey: string; keyId: string }

beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  pub = await publishableKey(ctx, biz.id, { origins: [LANDING, 'http://localhost:8080'] })
})
afterAll(() => ctx.close())

const corsNames = (h: Headers) => [...h.keys()].filter((k) => k.startsWith('access-control-')).sort()

describe('preflight (OPTIONS, no key)', () => {
  for (const path of ['/v1/leads/ingest', '/v1/leads/inquiries']) {
    test(`${path}: 204 with exactly the preflight fields, whatever the origin`, async () => {
      for (const origin of [LANDING, 'https://anyone.example']) {
        const res = await call(ctx.app, 'OPTIONS', path, {
          headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-api-key,idempotency-key' },
        })
        expect(res.status, res.text).toBe(204)
        expect(res.text).toBe('')
        expect(res.headers.get('access-control-allow-origin')).toBe(origin)
        expect(res.headers.get('access-control-allow-methods')).toBe('POST')
        expect(res.headers.get('access-control-allow-headers')).toBe('Content-Type, X-Api-Key, Idempotency-Key')
        expect(res.headers.get('access-control-max-age')).toBe('600')
        expect(res.headers.get('vary')).toBe('Origin')
        expect(corsNames(res.headers)).toEqual([
          'access-control-allow-headers',
          'access-control-allow-methods',
          'access-control-allow-origin',
          'access-control-max-age',
        ])
        expect(res.headers.get('x-request-id')).toBeString()
      }
    })
  }

  test('other paths keep no CORS at all: OPTIONS elsewhere is a 401 without CORS fields', async () => {
    for (const path of ['/v1/properties', '/v1/leads', '/v1/me']) {
      const res = await call(ctx.app, 'OPTIONS', path, { headers: { origin: LANDING, 'access-control-request-method': 'POST' } })
      expect(res.status, path).toBe(401)
      expect(corsNames(res.headers), path).toEqual([])
    }
    const me = await call(ctx.app, 'GET', '/v1/me', { key: pub.apiKey, headers: { origin: LANDING } })
    expect(me.status).toBe(200)
    expect(corsNames(me.headers)).toEqual([])
  })
})

describe('the request itself with a publishable key', () => {
  test('from a listed origin: accepted, with Access-Control-Allow-Origin, Vary and the exposed fields', async () => {
    for (const [path, body] of [
      ['/v1/leads/ingest', ingestBody()],
      ['/v1/leads/inquiries', inquiryBody()],
    ] as const) {
      const res = await call(ctx.app, 'POST', path, { key: pub.apiKey, body, headers: { origin: LANDING } })
      expect(res.status, res.text).toBe(200)
      expect(res.headers.get('access-control-allow-origin')).toBe(LANDING)
      expect(res.headers.get('vary')).toBe('Origin')
      expect(res.headers.get('access-control-expose-headers')).toBe('X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed')
    }
    const local = await call(ctx.app, 'POST', '/v1/leads/ingest', { key: pub.apiKey, body: ingestBody(), headers: { origin: 'http://localhost:8080' } })
    expect(local.status).toBe(200)
    expect(local.headers.get('access-control-allow-origin')).toBe('http://localhost:8080')
  })

  test('refusals from a listed origin carry the CORS fields too, so the page can read them', async () => {
    const res = await call(ctx.app, 'POST', '/v1/leads/inquiries', {
      key: pub.apiKey,
      body: { contact: { name: 'Ana' }, message: 'x' },
      headers: { origin: LANDING },
    })
    expect(res.status).toBe(422)
    expect(res.headers.get('access-control-allow-origin')).toBe(LANDING)
    expect(res.headers.get('access-control-expose-headers')).toContain('RateLimit')
  })

  test('origins compare exactly: scheme, host and port; a missing Origin is refused; nothing is stored', async () => {
    const before = await stored(ctx, biz.id)
    const refusedOrigins = [
      'http://landing.example.com', // scheme
      'https://landing.example.com:8443', // port
      'https://landing.example.com:443', // not how a browser writes it: compared as sent
      'https://www.landing.example.com', // host
      'https://example.com',
      'https://landing.example.com.evil.example',
      'https://LANDING.example.com',
      'http://localhost:8081',
      'http://localhost',
      'null',
    ]
    for (const origin of [...refusedOrigins, null]) {
      for (const [path, body] of [
        ['/v1/leads/ingest', ingestBody()],
        ['/v1/leads/inquiries', inquiryBody()],
      ] as const) {
        const res = await call(ctx.app, 'POST', path, { key: pub.apiKey, body, headers: origin === null ? {} : { origin } })
        expect(res.status, `${origin} ${path}: ${res.text}`).toBe(403)
        expect(res.headers.get('content-type')).toStartWith('application/problem+json')
        expect(res.body.type).toEndWith('origin-not-allowed')
        expect(res.body.detail).toContain(origin === null ? 'no Origin header' : origin)
        expect(corsNames(res.headers)).toEqual([])
      }
    }
    expect(await stored(ctx, biz.id)).toEqual(before)
  })

  test('a refused origin is counted in /metrics', async () => {
    const metric = async () => Number(/^cors_origin_refusals_total (\d+)$/m.exec((await call(ctx.app, 'GET', '/metrics')).text)?.[1])
    const before = await metric()
    await call(ctx.app, 'POST', '/v1/leads/ingest', { key: pub.apiKey, body: ingestBody(), headers: { origin: 'https://evil.example' } })
    expect(await metric()).toBe(before + 1)
  })
})

describe('secret keys', () => {
  test('no CORS field on any answer, whatever the Origin; the request is served as before', async () => {
    const ok = await call(ctx.app, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody(), headers: { origin: LANDING } })
    expect(ok.status, ok.text).toBe(200)
    const unlisted = await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: biz.apiKey, body: inquiryBody(), headers: { origin: 'https://evil.example' } })
    expect(unlisted.status, unlisted.text).toBe(200)
    const refused = await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: biz.apiKey, body: { message: 'x' }, headers: { origin: LANDING } })
    expect(refused.status).toBe(422)
    for (const res of [ok, unlisted, refused]) {
      expect(corsNames(res.headers)).toEqual([])
      expect(res.headers.get('vary')).toBeNull()
      expect(res.headers.get('ratelimit')).toBeNull()
      expect(res.headers.get('ratelimit-policy')).toBeNull()
    }
  })
})
