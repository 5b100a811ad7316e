/**
 * shared/platform/fetch.ts against real local servers (architecture.md "Fetching URLs", contract
 * §9.2, §10.2): redirects checked hop by hop, bounds on time, size and redirects, and the
 * connection made to the address that was checked. Traffic goes to loopback only: the servers
 * are reached through the allow-list or a resolver the test controls.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Server, TCPSocketListener } from 'bun'
import { FetchError, safeFetch, type ResolveHost, type SafeFetchOptions } from '../../shared/platform/fetch'

const MiB = 1024 * 1024
const seen: { path: string; method: string; host: string | null }[] = []
let hugeBytesSent = 0

let server: Server<undefined>
let silent: TCPSocketListener<undefined>
let base: string

beforeAll(() => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      seen.push({ path: url.pathname, method: req.method, host: req.headers.get('host') })
      const [, route, arg] = url.pathname.split('/')
      switch (route) {
        case 'ok':
          return new Response('hello')
        case 'echo':
          return Response.json({
            method: req.method,
            host: req.headers.get('host'),
            type: req.headers.get('content-type'),
            auth: req.headers.get('authorization'),
            body: await req.text(),
          })
        case 'chain': {
          const left = Number(arg)
          return new Response(null, { status: 302, headers: { location: left === 0 ? '/ok' : `/chain/${left - 1}` } })
        }
        case 'to':
          return new Response(null, { status: Number(url.searchParams.get('status') ?? 302), headers: { location: url.searchParams.get('location')! } })
        case 'huge': {
          // 1 GiB made on demand, so the bytes sent show where the reader stopped.
          const chunk = new Uint8Array(64 * 1024)
          hugeBytesSent = 0
          return new Response(
            new ReadableStream({
              pull(controller) {
                if (hugeBytesSent >= 1024 * MiB) return controller.close()
                hugeBytesSent += chunk.byteLength
                controller.enqueue(chunk)
              },
            }),
          )
        }
        case 'declared':
          return new Response('x'.repeat(1000), { headers: { 'content-length': '1000' } })
        case 'stall-body':
          return new Response(
            new ReadableStream({
              start(c) {
                c.enqueue(new TextEncoder().encode('first bytes'))
              },
            }),
          )
        default:
          return new Response('no', { status: 404 })
      }
    },
  })
  base = `http://127.0.0.1:${server.port}`
  // Accepts connections and never answers.
  silent = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
})
afterAll(() => {
  server.stop(true)
  silent.stop(true)
})

const LOCAL: SafeFetchOptions = { allowHosts: ['127.0.0.1'], timeoutMs: 5_000, maxBytes: MiB, maxRedirects: 5 }

async function failure(promise: Promise<unknown>): Promise<FetchError> {
  try {
    await promise
  } catch (e) {
    if (e instanceof FetchError) return e
    throw e
  }
  throw new Error('expected a FetchError')
}

const text = (body: Uint8Array) => new TextDecoder().decode(body)

describe('requests', () => {
  test('GET an allowed host: status, headers and body', async () => {
    const res = await safeFetch(`${base}/ok`, LOCAL)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/plain')
    expect(text(res.body)).toBe('hello')
    expect(res.redirects).toBe(0)
  })

  test('POST with a body and headers; the Host header names the host of the URL', async () => {
    const res = await safeFetch(`${base}/echo`, {
      ...LOCAL,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': 'evt_1' },
      body: '{"a":1}',
    })
    expect(JSON.parse(text(res.body))).toEqual({ method: 'POST', host: `127.0.0.1:${server.port}`, type: 'application/json', auth: null, body: '{"a":1}' })
  })

  test('a loopback host that is not allowed is refused before any connection', async () => {
    const before = seen.length
    expect((await failure(safeFetch(`${base}/ok`, { ...LOCAL, allowHosts: [] }))).code).toBe('url_not_allowed')
    expect((await failure(safeFetch(`http://localhost:${server.port}/ok`, LOCAL))).code).toBe('url_not_allowed')
    expect(seen.length).toBe(before)
  })

  test('readBody: false answers with the status and leaves the body unread', async () => {
    const res = await safeFetch(`${base}/huge`, { ...LOCAL, readBody: false })
    expect(res.status).toBe(200)
    expect(res.body.byteLength).toBe(0)
  })
})

describe('redirects', () => {
  test('5 redirects are followed, a 6th is refused', async () => {
    const ok = await safeFetch(`${base}/chain/4`, LOCAL)
    expect({ status: ok.status, redirects: ok.redirects, url: ok.url, body: text(ok.body) }).toEqual({
      status: 200,
      redirects: 5,
      url: `${base}/ok`,
      body: 'hello',
    })
    const refused = await failure(safeFetch(`${base}/chain/5`, LOCAL))
    expect(refused.code).toBe('too_many_redirects')
  })

  test('maxRedirects 0: the 3xx is returned as it is (webhooks, §10.2)', async () => {
    const before = seen.length
    const res = await safeFetch(`${base}/to?location=/ok&status=307`, { ...LOCAL, maxRedirects: 0, method: 'POST', body: 'x' })
    expect(res.status).toBe(307)
    expect(res.headers.get('location')).toBe('/ok')
    expect(seen.slice(before).map((s) => s.path)).toEqual(['/to'])
  })

  test('each hop is checked again: cloud metadata, [::1] and a name resolving to 10.0.0.1 are refused', async () => {
    const resolve: ResolveHost = async (host) => (host === 'internal.example' ? ['10.0.0.1'] : ['127.0.0.1', '::1'])
    for (const target of [
      'http://169.254.169.254/latest/meta-data/',
      `http://[::1]:${server.port}/ok`,
      'http://internal.example/',
      `http://localhost:${server.port}/ok`,
      `http://0x7f.2:${server.port}/ok`,
    ]) {
      const before = seen.length
      const error = await failure(safeFetch(`${base}/to?location=${encodeURIComponent(target)}`, { ...LOCAL, resolve }))
      expect({ target, code: error.code, url: error.url }).toEqual({ target, code: 'url_not_allowed', url: new URL(target).href })
      expect(seen.slice(before).map((s) => s.path)).toEqual(['/to'])
    }
  })

  test('a redirect to another scheme is a bad URL', async () => {
    expect((await failure(safeFetch(`${base}/to?location=${encodeURIComponent('file:///etc/passwd')}`, LOCAL))).code).toBe('bad_url')
  })

  test('303 turns a POST into a GET without its body; credentials stay with their origin', async () => {
    const res = await safeFetch(`${base}/to?status=303&location=/echo`, {
      ...LOCAL,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer t' },
      body: '{}',
    })
    expect(JSON.parse(text(res.body))).toMatchObject({ method: 'GET', type: null, auth: 'Bearer t', body: '' })
    const resolve: ResolveHost = async () => ['127.0.0.1']
    const other = `http://echo.test:${server.port}/echo`
    const crossed = await safeFetch(`${base}/to?status=307&location=${encodeURIComponent(other)}`, {
      ...LOCAL,
      allowHosts: ['127.0.0.1', 'echo.test'],
      resolve,
      method: 'POST',
      headers: { authorization: 'Bearer t' },
      body: 'kept',
    })
    expect(JSON.parse(text(crossed.body))).toMatchObject({ method: 'POST', host: `echo.test:${server.port}`, auth: null, body: 'kept' })
  })
})

describe('bounds', () => {
  test('a server that never answers: timeout after timeoutMs', async () => {
    // `timeout` is given only when the deadline made from timeoutMs has passed.
    const error = await failure(safeFetch(`http://127.0.0.1:${silent.port}/`, { ...LOCAL, timeoutMs: 300 }))
    expect(error.code).toBe('timeout')
  })

  test('a body that stops arriving: timeout', async () => {
    expect((await failure(safeFetch(`${base}/stall-body`, { ...LOCAL, timeoutMs: 300 }))).code).toBe('timeout')
  })

  test('a resolver that never answers: timeout', async () => {
    const resolve: ResolveHost = () => new Promise(() => {})
    expect((await failure(safeFetch('http://slow-dns.example/', { ...LOCAL, resolve, timeoutMs: 200 }))).code).toBe('timeout')
  })

  test('a 1 GiB streamed body: too_large once past maxBytes, reading stops, memory stays low', async () => {
    Bun.gc(true)
    const rssBefore = process.memoryUsage().rss
    const error = await failure(safeFetch(`${base}/huge`, { ...LOCAL, maxBytes: 8 * MiB, timeoutMs: 20_000 }))
    expect(error.code).toBe('too_large')
    expect(hugeBytesSent).toBeLessThan(64 * MiB)
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(128 * MiB)
  })

  test('a declared Content-Length past maxBytes is refused before reading; at the bound it is read', async () => {
    expect((await failure(safeFetch(`${base}/declared`, { ...LOCAL, maxBytes: 999 }))).code).toBe('too_large')
    expect((await safeFetch(`${base}/declared`, { ...LOCAL, maxBytes: 1000 })).body.byteLength).toBe(1000)
  })

  test('nothing listening: connection_failed', async () => {
    const closed = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const port = closed.port
    closed.stop(true)
    expect((await failure(safeFetch(`http://127.0.0.1:${port}/`, LOCAL))).code).toBe('connection_failed')
  })
})

describe('the connection goes to the address that was checked (no second lookup)', () => {
  let first: Server<undefined>
  let second: Server<undefined>
  const hits = { first: 0, second: 0 }
  beforeAll(() => {
    // Two servers on one port, on two loopback addresses: which one answers shows which address
    // the request was sent to.
    first = Bun.serve({
      hostname: '127.0.0.2',
      port: 0,
      fetch: () => {
        hits.first++
        return new Response('first')
      },
    })
    second = Bun.serve({
      hostname: '127.0.0.1',
      port: first.port,
      fetch: () => {
        hits.second++
        return new Response('second')
      },
    })
  })
  afterAll(() => {
    first.stop(true)
    second.stop(true)
  })

  test('a resolver answering one address, then 127.0.0.1: the request reaches the first, the resolver is asked once', async () => {
    const answers = [['127.0.0.2'], ['127.0.0.1']]
    let calls = 0
    const rebinding: ResolveHost = async () => answers[Math.min(calls++, 1)]
    const res = await safeFetch(`http://rebind.test:${first.port}/`, { ...LOCAL, allowHosts: ['rebind.test'], resolve: rebinding })
    expect({ body: text(res.body), calls, hits }).toEqual({ body: 'first', calls: 1, hits: { first: 1, second: 0 } })
  })

  test('fetch never resolves the name itself: localhost answered by our resolver as 127.0.0.2 goes there', async () => {
    hits.first = hits.second = 0
    const res = await safeFetch(`http://localhost:${first.port}/`, { ...LOCAL, allowHosts: ['localhost'], resolve: async () => ['127.0.0.2'] })
    expect({ body: text(res.body), hits }).toEqual({ body: 'first', hits: { first: 1, second: 0 } })
  })

  test('an address that cannot be put in a URL is never replaced by the name', async () => {
    const error = await failure(safeFetch(`http://localhost:${first.port}/`, { ...LOCAL, allowHosts: ['localhost'], resolve: async () => ['fe80::1%lo'] }))
    expect(error.code).toBe('connection_failed')
    expect(hits.second).toBe(0)
  })
})
