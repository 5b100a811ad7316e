import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_JSON_BODY_BYTES } from '../../api/request-body'
import { createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'

// A chunked body (no Content-Length) must neither be read before the key is
// checked nor past 1 MiB + 1 byte. The stream below counts what the API pulls from it.
let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const CHUNK = 64 * 1024

/** A chunked request whose body offers `totalBytes` in 64 KiB chunks and records how many were pulled. */
function chunkedRequest(path: string, totalBytes: number, headers: Record<string, string>) {
  const pulled = { bytes: 0 }
  const chunk = new Uint8Array(CHUNK).fill(0x20)
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled.bytes >= totalBytes) return controller.close()
        pulled.bytes += CHUNK
        controller.enqueue(chunk)
      },
    },
    { highWaterMark: 0 },
  )
  const request = new Request(`http://localhost${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    duplex: 'half',
  } as RequestInit)
  expect(request.headers.get('content-length')).toBeNull()
  return { request, pulled }
}

describe('chunked bodies', () => {
  test('an anonymous chunked body is answered 401 without reading it', async () => {
    for (const headers of [{}, { 'x-api-key': 'AC_LIVE_nope.nope' }, { 'x-api-key': 'garbage' }] as Record<string, string>[]) {
      const { request, pulled } = chunkedRequest('/v1/leads', 50 * 1024 * 1024, headers)
      const res = await ctx.app.handle(request)
      expect(res.status).toBe(401)
      expect(res.headers.get('content-type')).toStartWith('application/problem+json')
      expect(pulled.bytes).toBeLessThanOrEqual(CHUNK)
    }
  })

  test('an authenticated chunked body is cut at 1 MiB + 1 byte with 413', async () => {
    const { request, pulled } = chunkedRequest('/v1/leads', 50 * 1024 * 1024, { 'x-api-key': biz.apiKey })
    const res = await ctx.app.handle(request)
    expect(res.status).toBe(413)
    expect(((await res.json()) as { code: string }).code).toBe('payload_too_large')
    expect(pulled.bytes).toBeLessThanOrEqual(MAX_JSON_BODY_BYTES + CHUNK)
  })

  test('an authenticated chunked body under the limit is read whole', async () => {
    const body = JSON.stringify({ name: 'Chunked Ana', phone: '+34611000111', notes: 'x'.repeat(200_000) })
    const bytes = new TextEncoder().encode(body)
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 7000) controller.enqueue(bytes.subarray(i, i + 7000))
        controller.close()
      },
    })
    const res = await ctx.app.handle(
      new Request('http://localhost/v1/leads', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': biz.apiKey },
        body: stream,
        duplex: 'half',
      } as RequestInit),
    )
    // Reached validation: the body was read and parsed (notes over its bound or a created lead).
    expect([201, 422]).toContain(res.status)
    const json = (await res.json()) as { code?: string }
    expect(json.code).not.toBe('payload_too_large')
  })
})
