import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { putUpload } from '../helpers/images'
import { createProperty } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'local-storage-'))
  ctx = await createTestContext({ DATA_DIR: dir, STORAGE_DRIVER: 'local', UPLOAD_URL_TTL_SECONDS: '60' })
  biz = await seedBusiness(ctx)
})
afterAll(async () => {
  await ctx.close()
  await rm(dir, { recursive: true, force: true })
})

async function target(size = 100, contentType = 'image/png') {
  const id = await createProperty(ctx, biz.apiKey)
  const res = await call(ctx.app, 'POST', `/v1/properties/${id}/images/uploads`, {
    key: biz.apiKey,
    body: { files: [{ filename: 'a.png', content_type: contentType, size }] },
  })
  expect(res.status, res.text).toBe(201)
  expect(new Date(res.body.expires_at).getTime() - Date.now()).toBeLessThanOrEqual(60_000)
  return res.body.files[0] as { url: string; headers: Record<string, string> }
}
const put = (url: string, headers: Record<string, string>, body: Uint8Array) => {
  const u = new URL(url)
  return ctx.app.handle(new Request(`http://localhost${u.pathname}${u.search}`, { method: 'PUT', headers, body }))
}

describe('local signed PUT /storage/*', () => {
  test('accepts the declared size with the returned headers, and no API key', async () => {
    const t = await target(100)
    expect(t.url).toMatch(/^http:\/\/127\.0\.0\.1:3000\/storage\/originals\/[0-9a-f]{32}\?expires=\d+&max=100&sig=/)
    expect((await putUpload(ctx, t, new Uint8Array(100))).status).toBe(200)
  })

  test('upload URLs do not depend on a PORT or PUBLIC_URL the caller exported for a service of their own', async () => {
    const saved = { PORT: process.env.PORT, PUBLIC_URL: process.env.PUBLIC_URL }
    Object.assign(process.env, { PORT: '3900', PUBLIC_URL: 'https://elsewhere.example' })
    // The context reads the environment when it is called, before its first await.
    const pending = createTestContext({ DATA_DIR: dir, STORAGE_DRIVER: 'local' })
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    const other = await pending
    try {
      expect(other.config.port).toBe(3000)
      expect(other.config.publicUrl).toBe('http://127.0.0.1:3000')
    } finally {
      await other.close()
    }
  })

  test('refuses a larger body (413), another content type, a tampered or expired URL (403), as problem+json', async () => {
    const t = await target(100)
    const cases: [string, Record<string, string>, number, number][] = [
      [t.url, t.headers, 101, 413],
      [t.url, { 'content-type': 'image/jpeg' }, 10, 403],
      [t.url, { 'content-type': 'text/plain' }, 10, 403],
      [t.url.replace('max=100', 'max=100000'), t.headers, 10, 403],
      [t.url.replace(/sig=[^&]+/, 'sig=AAAA'), t.headers, 10, 403],
      [t.url.replace(/expires=\d+/, `expires=${Math.floor(Date.now() / 1000) - 10}`), t.headers, 10, 403],
      [t.url.replace(/originals\/[0-9a-f]+/, 'originals/0123456789abcdef0123456789abcdef'), t.headers, 10, 403],
    ]
    for (const [url, headers, size, status] of cases) {
      const res = await put(url, headers, new Uint8Array(size))
      expect(res.status, url).toBe(status)
      expect(res.headers.get('content-type')).toContain('application/problem+json')
      expect(res.headers.get('cache-control')).toBe('no-store')
    }
    // A streamed body without Content-Length is cut off at the bound too.
    const u = new URL(t.url)
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new Uint8Array(80))
        c.enqueue(new Uint8Array(80))
        c.close()
      },
    })
    const res = await ctx.app.handle(new Request(`http://localhost${u.pathname}${u.search}`, { method: 'PUT', headers: t.headers, body: stream }))
    expect(res.status).toBe(413)
  })

  test('nothing under /storage is readable, and /cdn serves only public copies', async () => {
    const t = await target(10)
    await putUpload(ctx, t, new Uint8Array(10))
    const path = new URL(t.url).pathname
    expect((await ctx.app.handle(new Request(`http://localhost${path}`))).status).toBe(404)
    expect((await ctx.app.handle(new Request(`http://localhost/cdn/${path.slice('/storage/'.length)}`))).status).toBe(404)
    expect((await ctx.app.handle(new Request('http://localhost/cdn/images/../private/x'))).status).toBe(404)
    const missing = await ctx.app.handle(new Request('http://localhost/cdn/images/0123456789abcdef0123456789abcdef.jpg'))
    expect(missing.status).toBe(404)
    expect(missing.headers.get('cache-control')).toBe('no-store')
    await ctx.deps.storage.put('public', 'images/0123456789abcdef0123456789abcdef.jpg', new Uint8Array([0xff, 0xd8, 0xff]), 'image/jpeg')
    const ok = await ctx.app.handle(new Request('http://localhost/cdn/images/0123456789abcdef0123456789abcdef.jpg'))
    expect(ok.status).toBe(200)
    expect(ok.headers.get('content-type')).toBe('image/jpeg')
    expect(ok.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
  })

  test('the routes are not in the OpenAPI document; the three upload operations are', async () => {
    const doc = (await call(ctx.app, 'GET', '/openapi.json')).body
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/storage') || p.startsWith('/cdn'))).toEqual([])
    const ops = Object.values<any>(doc.paths).flatMap((item) => Object.values<any>(item).map((op) => op.operationId))
    expect(ops).toEqual(expect.arrayContaining(['createImageUpload', 'completeImageUpload', 'getImageUpload']))
  })

  test('scope: properties:write is required (403 with a read-only key)', async () => {
    const id = await createProperty(ctx, biz.apiKey)
    const readOnly = await biz.key(['properties:read'])
    const res = await call(ctx.app, 'POST', `/v1/properties/${id}/images/uploads`, {
      key: readOnly.apiKey,
      body: { files: [{ filename: 'a.png', content_type: 'image/png', size: 1 }] },
    })
    expect(res.status).toBe(403)
  })

  test('request validation: file count, size and content type bounds, unknown fields', async () => {
    const id = await createProperty(ctx, biz.apiKey)
    const bad = [
      { files: [] },
      { files: Array.from({ length: 51 }, () => ({ filename: 'a.png', content_type: 'image/png', size: 1 })) },
      { files: [{ filename: 'a.gif', content_type: 'image/gif', size: 1 }] },
      { files: [{ filename: 'a.png', content_type: 'image/png', size: 26_214_401 }] },
      { files: [{ filename: 'a.png', content_type: 'image/png', size: 0 }] },
      { files: [{ filename: '', content_type: 'image/png', size: 1 }] },
      { files: [{ filename: 'a.png', content_type: 'image/png', size: 1, extra: true }] },
    ]
    for (const body of bad) {
      const res = await call(ctx.app, 'POST', `/v1/properties/${id}/images/uploads`, { key: biz.apiKey, body })
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422)
    }
  })
})
