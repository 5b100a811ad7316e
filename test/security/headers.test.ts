/**
 * Response headers of contract §15 §6: every answer carries `X-Content-Type-Options: nosniff`
 * (errors, 404s, /cdn, /docs and its script, /openapi.json, /feeds, /metrics included), and
 * `/docs` a `Content-Security-Policy` that allows only its own origin.
 * test/api/docs-browser.test.ts checks that the page still renders under it, with no violation.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createFeed } from '../../shared/feeds/operations'
import { createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createPublished } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
let dataDir: string
let feed: string
const IMAGE_KEY = `images/${'a'.repeat(32)}.jpg`

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'headers-'))
  ctx = await createTestContext({ DATA_DIR: dataDir, STORAGE_DRIVER: 'local' })
  biz = await seedBusiness(ctx)
  await createPublished(ctx, biz.apiKey)
  await ctx.deps.storage.put('public', IMAGE_KEY, Buffer.from([0xff, 0xd8, 0xff, 0xd9]), 'image/jpeg')
  feed = new URL((await createFeed(ctx.deps, biz.id, 'kyero')).url).pathname
})
afterAll(async () => {
  await ctx?.close()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

const request = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
  ctx.app.handle(new Request(`http://localhost${path}`, { method, headers, body }))

describe('X-Content-Type-Options: nosniff on every answer', () => {
  test('successes, errors, 404s, documents, feeds, metrics, public copies, uploads', async () => {
    const docs = await (await request('GET', '/docs')).text()
    const bundle = /src="(\/docs\/assets\/[^"]+)"/.exec(docs)![1]
    const etag = (await request('GET', feed)).headers.get('etag')!
    const cases: [string, string, Record<string, string>?, string?][] = [
      ['GET', '/v1/me', { 'x-api-key': biz.apiKey }],
      ['GET', '/v1/me'],
      ['GET', '/v1/me', { 'x-api-key': 'AC_LIVE_nope.nope' }],
      ['GET', '/v1/nowhere', { 'x-api-key': biz.apiKey }],
      ['GET', '/nowhere'],
      ['GET', '/v1/properties?limit=0', { 'x-api-key': biz.apiKey }],
      ['GET', '/v1/properties', { 'x-api-key': biz.apiKey }],
      ['GET', '/v1/properties/2147483000', { 'x-api-key': biz.apiKey }],
      ['POST', '/v1/leads', { 'x-api-key': biz.apiKey, 'content-type': 'application/json' }, '{"name":'],
      ['POST', '/v1/leads', { 'x-api-key': biz.apiKey, 'content-type': 'application/json' }, JSON.stringify({ name: 'Ana' })],
      ['GET', '/v1/events', { 'x-api-key': biz.apiKey }],
      ['GET', '/v1/events/nope', { 'x-api-key': biz.apiKey }],
      ['GET', '/healthz'],
      ['GET', '/readyz'],
      ['GET', '/metrics'],
      ['GET', '/openapi.json'],
      ['GET', '/docs'],
      ['GET', bundle],
      ['GET', '/docs/assets/scalar-0.0.0/standalone.js'],
      ['GET', feed],
      ['GET', feed, { 'if-none-match': etag }],
      ['GET', '/feeds/nope/kyero.xml'],
      ['GET', `/cdn/${IMAGE_KEY}`],
      ['GET', `/cdn/${IMAGE_KEY}`, { range: 'bytes=0-1' }],
      ['GET', `/cdn/${IMAGE_KEY}`, { range: 'bytes=90-99' }],
      ['GET', `/cdn/images/${'b'.repeat(32)}.jpg`],
      ['GET', '/cdn/../etc/passwd'],
      ['PUT', `/storage/originals/${'c'.repeat(32)}?expires=1&max=1&sig=x`, { 'content-type': 'image/jpeg' }, 'x'],
      ['DELETE', '/v1/me', { 'x-api-key': biz.apiKey }],
    ]
    const missing: string[] = []
    for (const [method, path, headers, body] of cases) {
      const res = await request(method, path, headers, body)
      if (res.headers.get('x-content-type-options') !== 'nosniff') missing.push(`${method} ${path} ${JSON.stringify(headers ?? {})} → ${res.status}`)
      await res.arrayBuffer()
    }
    expect(missing).toEqual([])
  })

  test('on API answers made by the idempotency replay and by the problem writer alike', async () => {
    const headers = { 'x-api-key': biz.apiKey, 'content-type': 'application/json', 'idempotency-key': `nosniff-${Date.now()}` }
    const first = await request('POST', '/v1/leads', headers, JSON.stringify({ name: 'Replay' }))
    const replay = await request('POST', '/v1/leads', headers, JSON.stringify({ name: 'Replay' }))
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    for (const res of [first, replay]) expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  })
})

describe('/docs Content-Security-Policy (contract §15 §6)', () => {
  test("allows only the page's own origin: no other host, no inline script, no eval, no framing by others", async () => {
    const res = await request('GET', '/docs')
    const csp = res.headers.get('content-security-policy')
    expect(csp).toBeTruthy()
    const directives = new Map(
      csp!
        .split(';')
        .map((d) => d.trim())
        .filter(Boolean)
        .map((d) => {
          const [name, ...sources] = d.split(/\s+/)
          return [name, sources] as [string, string[]]
        }),
    )
    expect(directives.get('default-src')).toEqual(["'self'"])
    expect(directives.get('script-src')).toEqual(["'self'"])
    expect(directives.get('object-src')).toEqual(["'none'"])
    expect(directives.get('base-uri')).toEqual(["'self'"])
    expect(directives.get('frame-ancestors')).toEqual(["'self'"])
    for (const [name, sources] of directives) {
      for (const source of sources) expect(["'self'", "'none'", "'unsafe-inline'"], `${name} ${source}`).toContain(source)
      if (sources.includes("'unsafe-inline'")) expect(name, 'only styles may be inline').toBe('style-src')
    }
    // The page runs no inline script: its scripts are files of this origin.
    const html = await res.text()
    expect([...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].every(([, attrs, body]) => /\ssrc="\//.test(attrs) && body.trim() === '')).toBe(true)
  })
})
