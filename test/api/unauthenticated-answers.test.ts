/**
 * "401 first": a request without a usable API key is a 401 problem+json whatever
 * else is wrong with it — content type, size, UTF-8, depth, malformed JSON, query and path
 * values, headers, unknown paths and methods under /v1 — both through `app.handle` and through a
 * real Bun.serve, where Bun itself could refuse a large declared body before the key is read.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import fc from 'fast-check'
import { apiKeys } from '../../db/schema'
import { startApi, type RunningApi } from '../../api/server'
import { createLogger } from '../../shared/platform/logger'
import { loadDocument, operationsOf, type Json, type Operation } from '../fuzz/openapi-schema'
import { requestsFor } from '../fuzz/requests'
import { rawRequest } from '../helpers/raw-http'
import { createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'

let ctx: TestContext
let biz: SeededBusiness
let doc: Json
let ops: Operation[]
/** Every way a key can be unusable, as request headers. */
let badKeys: { name: string; headers: Record<string, string> }[]

beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  doc = await loadDocument(ctx.app)
  ops = operationsOf(doc)
  const revoked = await biz.key()
  await ctx.deps.database.db.update(apiKeys).set({ revokedAt: sql`now()` }).where(eq(apiKeys.keyId, revoked.keyId))
  const expired = await biz.key(undefined, { expiresAt: new Date(Date.now() - 60_000) })
  badKeys = [
    { name: 'no key', headers: {} },
    { name: 'malformed key', headers: { 'x-api-key': 'not-a-key' } },
    { name: 'unknown key id', headers: { 'x-api-key': `AC_LIVE_${'Z'.repeat(16)}.${'a'.repeat(32)}` } },
    { name: 'wrong secret', headers: { 'x-api-key': `AC_LIVE_${biz.keyId}.${'b'.repeat(32)}` } },
    { name: 'revoked key', headers: { 'x-api-key': revoked.apiKey } },
    { name: 'expired key', headers: { 'x-api-key': expired.apiKey } },
    { name: 'Bearer scheme', headers: { authorization: `Bearer ${biz.apiKey}` } },
    { name: 'empty X-Api-Key', headers: { 'x-api-key': '' } },
  ]
})
afterAll(() => ctx.close())

async function expect401(res: Response, what: string): Promise<void> {
  const text = await res.text()
  expect(res.status, `${what}: ${text.slice(0, 300)}`).toBe(401)
  expect(res.headers.get('content-type'), what).toStartWith('application/problem+json')
  expect(res.headers.get('cache-control'), what).toBe('no-store')
  const body = JSON.parse(text)
  expect(body.code, what).toBe('unauthorized')
  expect(body.request_id, what).toBe(res.headers.get('x-request-id')!)
}

const JSON_TYPE = { 'content-type': 'application/json' }

/** One defect each: without a usable key every one of them must be a 401, not its own error. */
const DEFECTS: { name: string; method: string; path: string; headers?: Record<string, string>; body?: RequestInit['body'] }[] = [
  { name: 'wrong content type', method: 'POST', path: '/v1/properties', headers: { 'content-type': 'text/plain' }, body: 'title=x' },
  { name: 'no content type', method: 'POST', path: '/v1/leads', body: new Blob(['{"name":"x"}']) },
  {
    name: 'oversized Content-Length',
    method: 'POST',
    path: '/v1/properties',
    headers: { ...JSON_TYPE, 'content-length': String(5 * 1024 * 1024) },
    body: '{}',
  },
  { name: 'invalid UTF-8', method: 'POST', path: '/v1/leads', headers: JSON_TYPE, body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
  { name: 'too deep JSON', method: 'POST', path: '/v1/properties', headers: JSON_TYPE, body: '['.repeat(5000) + ']'.repeat(5000) },
  { name: 'malformed JSON', method: 'PATCH', path: '/v1/leads/1', headers: JSON_TYPE, body: '{"name": ' },
  { name: 'NUL in the body', method: 'POST', path: '/v1/leads', headers: JSON_TYPE, body: '{"name":"a\\u0000"}' },
  { name: 'invalid query value', method: 'GET', path: '/v1/properties?limit=abc' },
  { name: 'out-of-range query value', method: 'GET', path: '/v1/leads?limit=0' },
  { name: 'NUL in the query', method: 'GET', path: '/v1/properties?city=%00' },
  { name: 'broken percent-encoding', method: 'GET', path: '/v1/properties?city=%E0%A4%A' },
  { name: 'invalid path id', method: 'GET', path: '/v1/properties/abc' },
  { name: 'path id 0', method: 'POST', path: '/v1/properties/0/publish' },
  { name: 'invalid upload id', method: 'GET', path: '/v1/properties/1/images/uploads/not-a-uuid' },
  { name: 'empty Idempotency-Key', method: 'POST', path: '/v1/leads', headers: { ...JSON_TYPE, 'idempotency-key': '' }, body: '{"name":"x"}' },
  { name: 'unknown /v1 path', method: 'GET', path: '/v1/nowhere' },
  { name: 'unknown /v1 path, deeper', method: 'POST', path: '/v1/properties/1/videos', headers: JSON_TYPE, body: '{' },
  { name: 'the /v1 root', method: 'GET', path: '/v1' },
  { name: 'the /v1 root with a slash', method: 'GET', path: '/v1/' },
  { name: 'the /v1 root with a query', method: 'GET', path: '/v1?x=1' },
  { name: 'unsupported method', method: 'DELETE', path: '/v1/properties' },
  { name: 'unsupported method with a body', method: 'PUT', path: '/v1/leads/1', headers: { 'content-type': 'text/csv' }, body: 'a,b' },
  { name: 'OPTIONS', method: 'OPTIONS', path: '/v1/properties' },
]

describe('401 before any other error, through app.handle', () => {
  test('every defect × every unusable key', async () => {
    for (const key of badKeys) {
      for (const d of DEFECTS) {
        const res = await ctx.app.handle(
          new Request(`http://localhost${d.path}`, { method: d.method, headers: { ...d.headers, ...key.headers }, body: d.body }),
        )
        await expect401(res, `${key.name} + ${d.name} (${d.method} ${d.path})`)
      }
    }
  })

  test('generated hostile requests for every operation (property-based): always 401 without a usable key', async () => {
    const uuid = '00000000-0000-4000-8000-000000000000'
    const cases = fc.constantFrom(...ops).chain((op) => {
      const ids = Object.fromEntries(op.params.filter((p) => p.in === 'path').map((p) => [p.name, p.name === 'upload_id' ? uuid : 1]))
      return fc.tuple(requestsFor(doc, op, { ids, apiKey: 'placeholder' }), fc.nat())
    })
    await fc.assert(
      fc.asyncProperty(cases, async ([req, k]) => {
        const key = badKeys[k % badKeys.length]
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([h]) => h !== 'x-api-key' && h !== 'authorization'))
        // A mutation that sets an API key header leaves it as the (unusable) key under test.
        const mutatedKey = /^header (x-api-key|authorization):/.test(req.mutation)
          ? Object.fromEntries(Object.entries(req.headers).filter(([h]) => h === 'x-api-key' || h === 'authorization'))
          : {}
        const res = await ctx.app.handle(new Request(req.url, { method: req.method, headers: { ...headers, ...key.headers, ...mutatedKey }, body: req.body }))
        await expect401(res, `${key.name} + ${req.mutation} (${req.method} ${req.url.slice(0, 120)})`)
      }),
      { numRuns: Number(process.env.UNAUTHENTICATED_RUNS ?? 600) },
    )
  }, 60_000)
})

describe('401 before any other error, through a real Bun.serve', () => {
  let api: RunningApi
  beforeAll(async () => {
    api = await startApi({ ...ctx.config, port: 0 }, createLogger('silent'))
  })
  afterAll(() => api.close(2000))

  test('anonymous requests declaring huge bodies are a 401 problem+json, not Bun’s own 413', async () => {
    for (const [key, size] of [
      ['', 200 * 1024 * 1024],
      ['X-Api-Key: garbage\r\n', 30 * 1024 * 1024],
      [`X-Api-Key: AC_LIVE_${'Z'.repeat(16)}.${'a'.repeat(32)}\r\n`, 2 * 1024 * 1024 * 1024],
    ] as const) {
      const res = await rawRequest(
        api.port,
        `POST /v1/properties HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${key}Content-Length: ${size}\r\n\r\n`,
        '{"title":',
        { until: 'closed' },
      )
      expect(res.status, `${size} bytes: ${res.body}`).toBe(401)
      expect(res.headers['content-type']).toStartWith('application/problem+json')
      expect(res.headers['cache-control']).toBe('no-store')
      expect(res.headers['x-request-id']).toBeString()
      expect(JSON.parse(res.body).code).toBe('unauthorized')
      // The rest of the body is never read: the connection is closed after the answer.
      expect(res.headers.connection).toBe('close')
      expect(res.closed).toBe(true)
    }
  })

  test('the defects above are 401 through the network too', async () => {
    for (const d of DEFECTS) {
      const res = await fetch(`http://127.0.0.1:${api.port}${d.path}`, {
        method: d.method,
        headers: d.headers?.['content-length'] ? { ...d.headers, 'content-length': '2' } : d.headers,
        body: d.body,
      })
      await expect401(res, `${d.name} (${d.method} ${d.path})`)
    }
  })
})
