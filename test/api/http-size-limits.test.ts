/**
 * The size limits as a client meets them through a real Bun.serve. Bun's own 413
 * and 431 are bare answers (no problem+json, X-Request-Id or Cache-Control): Bun must not refuse
 * a body itself (the API's own limits answer instead), and the request-head limit must take a
 * `locations` query with a 1,000-vertex polygon.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MAX_JSON_BODY_BYTES } from '../../api/request-body'
import { MAX_HEADER_BYTES, startApi, type RunningApi } from '../../api/server'
import { createLogger } from '../../shared/platform/logger'
import { MAX_UPLOAD_BYTES } from '../../shared/media/schemas'
import { rawRequest, type RawAnswer } from '../helpers/raw-http'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createProperty } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
let api: RunningApi
let dir: string
let base: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'http-size-limits-'))
  ctx = await createTestContext({ DATA_DIR: dir, STORAGE_DRIVER: 'local' })
  biz = await seedBusiness(ctx)
  api = await startApi({ ...ctx.config, port: 0 }, createLogger('silent'))
  base = `http://127.0.0.1:${api.port}`
})
afterAll(async () => {
  await api.close(2000)
  await ctx.close()
  await rm(dir, { recursive: true, force: true })
})

function expectProblem(res: RawAnswer, status: number, code: string): void {
  expect(res.status, res.body.slice(0, 300)).toBe(status)
  expect(res.headers['content-type']).toStartWith('application/problem+json')
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
  const body = JSON.parse(res.body)
  expect(body).toMatchObject({ status, code, request_id: res.headers['x-request-id'] })
}

/** A closed ring of `n` vertices around Madrid, coordinates at full double precision. */
function polygon(n: number): string {
  const coordinates = Array.from({ length: n }, (_, i) => {
    const a = (2 * Math.PI * i) / n
    return { lat: 40.4167754 + 0.05 * Math.sin(a) + 1e-9 * i, lng: -3.7037902 + 0.07 * Math.cos(a) - 1e-9 * i }
  })
  return encodeURIComponent(JSON.stringify([{ geometry: { type: 'polygon', coordinates } }]))
}

describe('request head', () => {
  test('a locations query with a 1,000-vertex polygon is served, not refused with Bun’s bare 431', async () => {
    const locations = polygon(1000)
    expect(locations.length).toBeGreaterThan(64 * 1024)
    const res = await fetch(`${base}/v1/properties?locations=${locations}`, { headers: { 'x-api-key': biz.apiKey } })
    const text = await res.text()
    expect(res.status, text.slice(0, 300)).toBe(200)
    expect(JSON.parse(text).filters.locations[0].geometry.coordinates).toHaveLength(1000)
  })

  test('an anonymous 1,000-vertex query is a 401 problem+json', async () => {
    const res = await rawRequest(api.port, `GET /v1/properties?locations=${polygon(1000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
    expectProblem(res, 401, 'unauthorized')
  })

  test(`a request head up to ${MAX_HEADER_BYTES} bytes reaches the API; past it Bun answers a bare 431 and closes (documented)`, async () => {
    const head = (size: number) => {
      const start = `GET /v1/me?pad=`
      const rest = ` HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${biz.apiKey}\r\n\r\n`
      return start + 'a'.repeat(size - start.length - rest.length) + rest
    }
    const within = await rawRequest(api.port, head(MAX_HEADER_BYTES - 1024))
    expect(within.status, within.body.slice(0, 200)).toBe(200)
    expect(within.headers['x-request-id']).toBeString()
    const beyond = await rawRequest(api.port, head(MAX_HEADER_BYTES + 1024), '', { until: 'closed' })
    expect(beyond.status).toBe(431)
    expect(beyond.closed).toBe(true)
  })
})

describe('request bodies', () => {
  test('a JSON body declared over Bun’s former limit is the API’s 413 problem+json, and the connection closes unread', async () => {
    for (const size of [MAX_JSON_BODY_BYTES + 1, 30 * 1024 * 1024, 500 * 1024 * 1024]) {
      const res = await rawRequest(
        api.port,
        `POST /v1/leads HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${biz.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`,
        '{"name":',
        { until: 'closed' },
      )
      expectProblem(res, 413, 'payload_too_large')
      expect(res.closed).toBe(true)
    }
  })

  test('a chunked JSON body is cut at 1 MiB with the API’s 413, through the network', async () => {
    const chunk = new Uint8Array(64 * 1024).fill(0x20)
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= 40 * 1024 * 1024) return c.close()
        sent += chunk.byteLength
        c.enqueue(chunk)
      },
    })
    const res = await fetch(`${base}/v1/leads`, {
      method: 'POST',
      headers: { 'x-api-key': biz.apiKey, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit).catch((e) => e as Error)
    if (res instanceof Error) throw res
    expect(res.status).toBe(413)
    expect(res.headers.get('content-type')).toStartWith('application/problem+json')
    expect(res.headers.get('x-request-id')).toBeString()
    expect(sent).toBeLessThan(40 * 1024 * 1024)
  })

  describe('the local upload PUT keeps its own limit', () => {
    async function uploadTarget(size: number) {
      const id = await createProperty(ctx, biz.apiKey)
      const res = await call(ctx.app, 'POST', `/v1/properties/${id}/images/uploads`, {
        key: biz.apiKey,
        body: { files: [{ filename: 'a.png', content_type: 'image/png', size }] },
      })
      expect(res.status, res.text).toBe(201)
      const file = res.body.files[0] as { url: string; headers: Record<string, string> }
      const u = new URL(file.url)
      return { path: `${u.pathname}${u.search}`, headers: file.headers }
    }

    test('a declared size over the signed one (and over Bun’s former limit) is a 413 problem+json, unread', async () => {
      const t = await uploadTarget(MAX_UPLOAD_BYTES)
      for (const size of [MAX_UPLOAD_BYTES + 1, 30 * 1024 * 1024, 2 * 1024 * 1024 * 1024]) {
        const res = await rawRequest(
          api.port,
          `PUT ${t.path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${t.headers['content-type']}\r\nContent-Length: ${size}\r\n\r\n`,
          'x'.repeat(1000),
          { until: 'closed' },
        )
        expectProblem(res, 413, 'payload_too_large')
        expect(res.closed).toBe(true)
      }
    })

    test('a chunked body past the signed size is cut off with 413', async () => {
      const t = await uploadTarget(100_000)
      let sent = 0
      const chunk = new Uint8Array(16 * 1024)
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent >= 32 * 1024 * 1024) return c.close()
          sent += chunk.byteLength
          c.enqueue(chunk)
        },
      })
      const res = await fetch(`${base}${t.path}`, { method: 'PUT', headers: t.headers, body, duplex: 'half' } as RequestInit)
      expect(res.status).toBe(413)
      expect(res.headers.get('content-type')).toStartWith('application/problem+json')
      expect(sent).toBeLessThan(32 * 1024 * 1024)
    })

    test('a full 25 MiB upload still goes through', async () => {
      const t = await uploadTarget(MAX_UPLOAD_BYTES)
      const res = await fetch(`${base}${t.path}`, { method: 'PUT', headers: t.headers, body: new Uint8Array(MAX_UPLOAD_BYTES) })
      expect(res.status, await res.text()).toBe(200)
    })
  })
})
