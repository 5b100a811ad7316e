/**
 * The failures the generated hostile input found, pinned as plain cases: each answered 500 (or
 * held a core for seconds) before its fix.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH } from '../../api/request-body'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createProperty, propertyBody } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

describe('hostile input found by the fuzzer', () => {
  test('deeply nested JSON is a 422 naming the body, refused by its depth before it is parsed, not a 500', async () => {
    for (const n of [MAX_JSON_DEPTH + 1, 20_000, 200_000]) {
      const res = await call(ctx.app, 'POST', '/v1/properties', { key: biz.apiKey, body: '['.repeat(n) + ']'.repeat(n) })
      expect(res.status, res.text).toBe(422)
      expect(res.body.errors).toEqual([{ loc: ['body'], msg: `JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`, type: 'json_too_deep' }])
    }
    // Brackets inside strings are text, not nesting.
    const res = await call(ctx.app, 'POST', '/v1/properties', { key: biz.apiKey, body: { ...propertyBody(), title: '['.repeat(200) } })
    expect(res.status, res.text).toBe(201)
  })

  test('a body over 1 MiB without Content-Length (chunked) is a 413', async () => {
    const body = JSON.stringify({ ...propertyBody(), description: 'x'.repeat(MAX_JSON_BODY_BYTES) })
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body))
        controller.close()
      },
    })
    const res = await ctx.app.handle(
      new Request('http://localhost/v1/properties', { method: 'POST', headers: { 'x-api-key': biz.apiKey, 'content-type': 'application/json' }, body: stream }),
    )
    expect(res.status).toBe(413)
    expect(res.headers.get('content-type')).toStartWith('application/problem+json')
  })

  test('invalid UTF-8 in a JSON body is a 422', async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode('{"title":"'), 0xc3, 0x28, ...new TextEncoder().encode('"}')])
    const res = await ctx.app.handle(
      new Request('http://localhost/v1/properties', { method: 'POST', headers: { 'x-api-key': biz.apiKey, 'content-type': 'application/json' }, body: bytes }),
    )
    expect(res.status).toBe(422)
    expect(((await res.json()) as any).errors[0].msg).toBe('Request body is not valid UTF-8')
  })

  test('NUL characters in body strings, keys or query values are a 422 at their place (PostgreSQL text cannot hold them)', async () => {
    const body = await call(ctx.app, 'POST', '/v1/properties', {
      key: biz.apiKey,
      body: { ...propertyBody(), title: 'a\u0000b', location: { ...propertyBody().location, city: '\u0000' } },
    })
    expect(body.status, body.text).toBe(422)
    expect(body.body.errors.map((e: { loc: unknown }) => e.loc)).toEqual([
      ['body', 'title'],
      ['body', 'location', 'city'],
    ])
    const id = await createProperty(ctx, biz.apiKey)
    const patch = await call(ctx.app, 'PATCH', `/v1/properties/${id}`, { key: biz.apiKey, body: { description: '<p>\u0000</p>' } })
    expect(patch.status, patch.text).toBe(422)
    expect(patch.body.errors[0].loc).toEqual(['body', 'description'])
    const list = await call(ctx.app, 'GET', '/v1/properties?city=%00x&status=ok', { key: biz.apiKey })
    expect(list.status, list.text).toBe(422)
    expect(list.body.errors).toEqual([{ loc: ['query', 'city'], msg: 'Must not contain the NUL character (U+0000) or an unpaired surrogate', type: 'invalid' }])
    // The scope check still comes first.
    const { apiKey: readOnly } = await biz.key(['leads:read'])
    expect((await call(ctx.app, 'GET', '/v1/properties?city=%00', { key: readOnly })).status).toBe(403)
  })

  test('an unpaired surrogate escaped in a body string or key is a 422 at its place (jsonb and text refuse it); a pair is fine', async () => {
    const raw = '{"name":"Ana","phone":"+34600111333","search_location":{"zone":"x\\ud800","\\udc00k":"v"}}'
    const res = await call(ctx.app, 'POST', '/v1/leads', { key: biz.apiKey, body: raw })
    expect(res.status, res.text).toBe(422)
    expect(res.body.errors.map((e: { loc: unknown }) => e.loc)).toEqual([
      ['body', 'search_location', 'zone'],
      ['body', 'search_location'],
    ])
    const ok = await call(ctx.app, 'POST', '/v1/leads', { key: biz.apiKey, body: '{"name":"Ana \\ud83d\\ude00","phone":"+34600111334"}' })
    expect(ok.status, ok.text).toBe(201)
  })

  test('an object with toString/valueOf keys where a string belongs is a 422, not a 500; as data it is kept', async () => {
    const res = await call(ctx.app, 'POST', '/v1/leads', { key: biz.apiKey, body: '{"name":{"toString":-1.5,"valueOf":2},"phone":"+34600111335"}' })
    expect(res.status, res.text).toBe(422)
    expect(res.body.errors[0].loc).toEqual(['body', 'name'])
    const ok = await call(ctx.app, 'POST', '/v1/leads', {
      key: biz.apiKey,
      body: '{"name":"Ana","phone":"+34600111336","search_location":{"toString":1,"name":"Centro"}}',
    })
    expect(ok.status, ok.text).toBe(201)
    const lead = await call(ctx.app, 'GET', `/v1/leads/${ok.body.id}`, { key: biz.apiKey })
    expect(lead.body.data.search_location).toEqual({ toString: 1, name: 'Centro' })
  })

  test('ids and numbers beyond PostgreSQL integer are a 422, not a 500', async () => {
    for (const path of ['/v1/properties/2147483648', '/v1/properties/9007199254740993']) {
      for (const method of ['GET', 'PATCH'] as const) {
        const res = await call(ctx.app, method, path, { key: biz.apiKey, body: method === 'PATCH' ? { title: 'x' } : undefined })
        expect(res.status, `${method} ${path}: ${res.text}`).toBe(422)
        expect(res.body.errors[0].loc).toEqual(['path', 'property_id'])
      }
    }
    expect((await call(ctx.app, 'GET', '/v1/properties/2147483647', { key: biz.apiKey })).status).toBe(404)
    for (const q of ['offset=2147483648', 'offset=1e20', 'min_bedrooms=2147483648']) {
      const res = await call(ctx.app, 'GET', `/v1/properties?${q}`, { key: biz.apiKey })
      expect(res.status, `${q}: ${res.text}`).toBe(422)
      expect(res.body.errors[0].loc).toEqual(['query', q.split('=')[0]])
    }
    for (const q of ['offset=2147483648', 'offset=1e20']) {
      const res = await call(ctx.app, 'GET', `/v1/leads?${q}`, { key: biz.apiKey })
      expect(res.status, `leads ${q}: ${res.text}`).toBe(422)
      expect(res.body.errors[0].loc).toEqual(['query', 'offset'])
    }
    const inquiry = await call(ctx.app, 'POST', '/v1/leads/inquiries', {
      key: biz.apiKey,
      body: { contact: { name: 'Ana', email: 'ana@example.com' }, message: 'Hola', property_id: 9007199254740994 },
    })
    expect(inquiry.status, inquiry.text).toBe(422)
    expect(inquiry.body.errors[0].loc).toEqual(['body', 'property_id'])
    const owner = await call(ctx.app, 'POST', '/v1/properties', { key: biz.apiKey, body: { ...propertyBody(), owner_id: 4294967296 } })
    expect(owner.status, owner.text).toBe(422)
    expect(owner.body.errors[0].loc).toEqual(['body', 'owner_id'])
  })
})
