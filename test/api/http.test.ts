import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Type as T } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { authPlugin } from '../../api/plugins/auth'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'

// The body rules of contract §6 are the same for every POST/PATCH route; this file checks them on
// a small route mounted for the test, and the generated tests check them on every real operation.
let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx, { scopes: ['leads:read'] })
  // A fresh instance: routes added to the shared authPlugin would appear in every app built
  // later in the same test process (and in its OpenAPI document).
  ;(ctx.app as any).use(
    new Elysia()
      .use(authPlugin)
      .post('/v1/__echo', ({ body }) => body, {
        scope: 'leads:read',
        body: T.Object(
          { name: T.String({ minLength: 1 }), nested: T.Optional(T.Object({ n: T.Integer() }, { additionalProperties: false })) },
          { additionalProperties: false },
        ),
      })
      .post('/v1/__write', () => ({ ok: true }), { scope: 'leads:write' }),
  )
})
afterAll(() => ctx.close())

describe('every response', () => {
  test('carries Cache-Control: no-store and X-Request-Id, errors included', async () => {
    for (const [method, path, key] of [
      ['GET', '/v1/me', biz.apiKey],
      ['GET', '/v1/me', null],
      ['GET', '/v1/nowhere', biz.apiKey],
      ['GET', '/healthz', null],
      ['GET', '/nowhere', null],
    ] as const) {
      const res = await call(ctx.app, method, path, { key })
      expect(res.headers.get('cache-control'), `${method} ${path}`).toBe('no-store')
      expect(res.headers.get('x-request-id'), `${method} ${path}`).toMatch(/^[0-9a-f-]{36}$/)
    }
  })

  test('a caller-supplied X-Request-Id is echoed', async () => {
    const res = await call(ctx.app, 'GET', '/v1/me', { key: biz.apiKey, headers: { 'x-request-id': 'trace-123' } })
    expect(res.headers.get('x-request-id')).toBe('trace-123')
  })

  test('one JSON log line per request with request id, key id, status and latency, never the secret', async () => {
    const res = await call(ctx.app, 'GET', '/v1/me', { key: biz.apiKey, headers: { 'x-request-id': 'log-check-1' } })
    expect(res.status).toBe(200)
    // The line is written after the response has gone out.
    const line = await eventually(async () => ctx.logs.map((l) => JSON.parse(l)).find((l) => l.request_id === 'log-check-1'))
    expect(line).toMatchObject({ msg: 'request', method: 'GET', route: '/v1/me', status: 200, key_id: biz.keyId, business_id: biz.id })
    expect(typeof line.latency_ms).toBe('number')
    const secret = biz.apiKey.split('.')[1]
    expect(ctx.logs.join('\n')).not.toContain(secret)
  })
})

describe('errors (contract §6)', () => {
  test('unknown route → 404 problem+json', async () => {
    const res = await call(ctx.app, 'GET', '/v1/nowhere', { key: biz.apiKey })
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toStartWith('application/problem+json')
    expect(res.body).toMatchObject({ status: 404, title: 'Not Found', type: expect.any(String), detail: expect.any(String) })
  })

  test('missing scope → 403 problem+json', async () => {
    const res = await call(ctx.app, 'POST', '/v1/__write', { key: biz.apiKey })
    expect(res.status, res.text).toBe(403)
    expect(res.body.detail).toContain('leads:write')
  })

  test('malformed JSON → 422', async () => {
    const res = await call(ctx.app, 'POST', '/v1/__echo', { key: biz.apiKey, body: '{"name": ' })
    expect(res.status, res.text).toBe(422)
    expect(res.body.errors[0].loc).toEqual(['body'])
  })

  test('missing Content-Type → 422', async () => {
    const res = await ctx.app.handle(
      new Request('http://localhost/v1/__echo', { method: 'POST', headers: { 'x-api-key': biz.apiKey }, body: new Blob(['{"name":"x"}']) }),
    )
    const body = (await res.json()) as { errors: { loc: string[] }[] }
    expect(res.status, JSON.stringify(body)).toBe(422)
    expect(body.errors[0].loc).toEqual(['header', 'content-type'])
  })

  test('non-JSON Content-Type → 422', async () => {
    const res = await call(ctx.app, 'POST', '/v1/__echo', { key: biz.apiKey, body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(res.status, res.text).toBe(422)
  })

  test('JSON with charset is accepted', async () => {
    const res = await call(ctx.app, 'POST', '/v1/__echo', {
      key: biz.apiKey,
      body: '{"name":"x"}',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    })
    expect(res.status, res.text).toBe(200)
  })

  test('body over 1 MiB → 413', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) })
    const res = await call(ctx.app, 'POST', '/v1/__echo', {
      key: biz.apiKey,
      body: big,
      headers: { 'content-type': 'application/json', 'content-length': String(big.length) },
    })
    expect(res.status, res.text.slice(0, 300)).toBe(413)
    expect(res.headers.get('content-type')).toStartWith('application/problem+json')
  })

  test('validation → 422 with errors[].loc for each field, unknown fields named', async () => {
    const res = await call(ctx.app, 'POST', '/v1/__echo', { key: biz.apiKey, body: { name: '', nested: { n: 'x' }, typo: 1 } })
    expect(res.status, res.text).toBe(422)
    const locs = res.body.errors.map((e: { loc: unknown[] }) => e.loc.join('.'))
    expect(locs).toContain('body.name')
    expect(locs).toContain('body.nested.n')
    expect(locs).toContain('body.typo')
    for (const e of res.body.errors) expect(e).toEqual({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) })
    expect(res.body.detail).toBeString()
  })

  test('a database outage answers 503 problem+json, not a hang', async () => {
    const { createApp } = await import('../../api/app')
    const { createDatabase } = await import('../../db/client')
    const broken = createDatabase('postgres://postgres@127.0.0.1:1/none', { max: 1 })
    const app = createApp({ ...ctx.deps, database: broken, keys: new (await import('../../shared/access/key-store')).KeyStore(broken.db) })
    const res = await call(app, 'GET', '/v1/me', { key: biz.apiKey })
    expect(res.status, res.text).toBe(503)
    expect(res.headers.get('content-type')).toStartWith('application/problem+json')
    expect(res.text).not.toContain('ECONNREFUSED')
    await broken.close(1)
  })
})

describe('ops endpoints (contract §6)', () => {
  test('/healthz and /readyz answer 200 with both stores up', async () => {
    expect((await call(ctx.app, 'GET', '/healthz')).status).toBe(200)
    const ready = await call(ctx.app, 'GET', '/readyz')
    expect(ready.status, ready.text).toBe(200)
    expect(ready.body.checks).toEqual({ postgres: 'ok', redis: 'ok' })
  })

  test('/readyz answers 503 when Redis is unreachable', async () => {
    const { redisConnection } = await import('../../shared/platform/queues')
    const { createApp } = await import('../../api/app')
    const redis = redisConnection('redis://127.0.0.1:1', 'producer', { retryStrategy: () => null })
    redis.on('error', () => {})
    const app = createApp({ ...ctx.deps, redis })
    const res = await call(app, 'GET', '/readyz')
    expect(res.status, res.text).toBe(503)
    expect(res.body.checks.redis).toBe('unreachable')
    redis.disconnect()
  })

  test('/metrics exposes request counts, latency and per-queue figures', async () => {
    await call(ctx.app, 'GET', '/v1/me', { key: biz.apiKey })
    const res = await call(ctx.app, 'GET', '/metrics')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('text/plain')
    expect(res.text).toMatch(/http_requests_total\{method="GET",route="\/v1\/me",status="200"\} \d+/)
    expect(res.text).toContain('http_request_duration_seconds_bucket')
    for (const q of ['lead-ingest', 'upload-complete', 'image-watermark', 'catalogue-reindex', 'outreach']) {
      expect(res.text).toContain(`queue_jobs{queue="${q}",state="waiting"}`)
      expect(res.text).toContain(`queue_jobs_processed_total{queue="${q}",outcome="failed"}`)
    }
  })
})
