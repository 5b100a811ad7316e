/**
 * api/elysia-adapter.ts reads Elysia objects beyond its lifecycle API. Each read is exercised
 * here against the installed Elysia, so an upgrade that changes one fails this file, loudly and
 * by name, rather than every request.
 */
import { describe, expect, test } from 'bun:test'
import { Elysia, t, ValidationError } from 'elysia'
import { matchedRoute, routeFinder, textAnswer, validationFailure, withoutParseFunctions } from '../../api/elysia-adapter'
import { eventually } from '../helpers/eventually'

describe('validationFailure', () => {
  test('names the target and each issue: unknown field, missing field, wrong type', async () => {
    let caught: unknown
    // As api/app.ts builds it: without normalisation an unknown field is reported, not dropped.
    const app = new Elysia({ normalize: false })
      .onError(({ error }) => {
        caught = error
        return new Response('x', { status: 422 })
      })
      .post('/x', () => 'ok', { body: t.Object({ name: t.String(), n: t.Integer() }, { additionalProperties: false }) })
    await app.handle(
      new Request('http://localhost/x', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n: 'one', extra: 1 }) }),
    )
    expect(caught).toBeInstanceOf(ValidationError)
    const failure = validationFailure(caught as ValidationError)
    expect(failure.target).toBe('body')
    const kinds = (path: string) => failure.issues.filter((i) => i.path === path).map((i) => i.kind)
    expect(kinds('/extra')).toEqual(['unknown_field'])
    // The first issue of a missing field says so (the ones after it describe the expected type).
    expect(kinds('/name')[0]).toBe('missing')
    expect(kinds('/n')).toEqual(['invalid'])
    expect(failure.issues.find((i) => i.path === '/n')?.value).toBe('one')
  })

  test('a path number out of bounds is reported with its raw value', async () => {
    let caught: unknown
    const app = new Elysia()
      .onError(({ error }) => {
        caught = error
        return new Response('x', { status: 422 })
      })
      .get('/x/:id', () => 'ok', { params: t.Object({ id: t.Integer({ minimum: 1 }) }) })
    await app.handle(new Request('http://localhost/x/0'))
    const failure = validationFailure(caught as ValidationError)
    expect(['params', 'property']).toContain(failure.target)
    expect(String(failure.value === undefined ? '' : JSON.stringify(failure.value))).toContain('0')
  })
})

test('matchedRoute gives the route path after the response, and nothing for an unmatched request', async () => {
  const seen: (string | undefined)[] = []
  const app = new Elysia().onAfterResponse({ as: 'global' }, (ctx) => void seen.push(matchedRoute(ctx))).get('/things/:id', () => 'ok')
  await app.handle(new Request('http://localhost/things/7'))
  await app.handle(new Request('http://localhost/nothing'))
  await eventually(async () => seen.length === 2, { what: 'both after-response hooks' })
  expect(seen).toEqual(['/things/:id', undefined])
})

test('withoutParseFunctions hides function parse hooks while generating, then restores them', async () => {
  const parse = () => ({ parsed: true })
  const app = new Elysia().onParse({ as: 'global' }, parse).post('/x', ({ body }) => body)
  const hooksOf = () => app.routes.map((r) => (r.hooks as { parse?: { fn: unknown }[] }).parse?.length ?? 0)
  expect(hooksOf()[0]).toBeGreaterThan(0)
  const during = withoutParseFunctions(app, hooksOf)
  expect(during[0]).toBe(0)
  expect(hooksOf()[0]).toBeGreaterThan(0)
  const res = await app.handle(new Request('http://localhost/x', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }))
  expect(await res.json()).toEqual({ parsed: true })
})

describe('routeFinder', () => {
  test('reads app.routes: a literal segment beats a parameter, a wildcard takes the rest, the method counts', () => {
    const app = new Elysia()
      .get('/v1/leads/:lead_id', () => 'one')
      .post('/v1/leads/inquiries', () => 'inquiry')
      .get('/v1/leads/inquiries', () => 'list')
      .get('/cdn/*', () => 'file')
    const find = routeFinder(() => app)
    expect(find('GET', '/v1/leads/7')).toBe('/v1/leads/:lead_id')
    expect(find('GET', '/v1/leads/inquiries')).toBe('/v1/leads/inquiries')
    expect(find('POST', '/v1/leads/inquiries')).toBe('/v1/leads/inquiries')
    expect(find('POST', '/v1/leads/7')).toBeUndefined()
    expect(find('GET', '/v1/leads/')).toBeUndefined()
    expect(find('GET', '/v1/leads/7/more')).toBeUndefined()
    expect(find('GET', '/cdn/images/a/b.webp')).toBe('/cdn/*')
  })
})

describe('textAnswer', () => {
  test('the text from mapResponse is sent once, with the status and headers of set, and a length (no stream)', async () => {
    const app = new Elysia()
      .mapResponse(({ responseValue, set }) => {
        if (typeof responseValue !== 'object') return
        set.headers['content-type'] = 'application/json'
        set.headers['x-one'] = '1'
        return textAnswer(JSON.stringify({ mapped: responseValue }))
      })
      .post('/x', ({ set }) => {
        set.status = 201
        return { a: 1 }
      })
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => app.handle(request) })
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/x`, { method: 'POST' })
      expect(res.status).toBe(201)
      expect(res.headers.get('content-type')).toBe('application/json')
      expect(res.headers.get('x-one')).toBe('1')
      expect(res.headers.get('transfer-encoding')).toBeNull()
      expect(res.headers.get('content-length')).toBe(String('{"mapped":{"a":1}}'.length))
      expect(await res.text()).toBe('{"mapped":{"a":1}}')
    } finally {
      server.stop(true)
    }
  })

  test("a mapResponse hook's text is answered with the status and every header of set, its content type kept", async () => {
    const app = new Elysia()
      .onRequest(({ set }) => {
        set.headers['x-early'] = 'a'
      })
      .mapResponse(({ responseValue, set }) => {
        if (typeof responseValue !== 'object') return
        set.headers['content-type'] ??= 'application/json'
        return textAnswer(JSON.stringify(responseValue))
      })
      .post('/created', ({ set }) => {
        set.status = 201
        set.headers['x-late'] = 'b'
        return { id: 1 }
      })
      .get('/typed', ({ set }) => {
        set.headers['content-type'] = 'application/problem+json'
        return { n: 2 }
      })
    const created = await app.handle(new Request('http://localhost/created', { method: 'POST' }))
    expect(created.status).toBe(201)
    expect(created.headers.get('content-type')).toBe('application/json')
    expect(created.headers.get('x-early')).toBe('a')
    expect(created.headers.get('x-late')).toBe('b')
    expect(await created.text()).toBe('{"id":1}')
    const typed = await app.handle(new Request('http://localhost/typed'))
    expect(typed.status).toBe(200)
    expect(typed.headers.get('content-type')).toBe('application/problem+json')
    expect(await typed.json()).toEqual({ n: 2 })
  })
})
