/**
 * Hostile requests for one operation of the document: a valid request (path, query, headers,
 * body from the operation's schemas, real ids of seeded rows) and then, most of the time, one
 * mutation of it: wrong types, missing and extra fields, huge strings, unicode, boundary
 * numbers, bad JSON, wrong content types, odd query strings, odd path ids and headers.
 */
import fc from 'fast-check'
import { arbitraryOf, type Json, type Operation, type Schema } from './openapi-schema'

export interface FuzzRequest {
  method: string
  url: string
  headers: Record<string, string>
  body?: string
  /** What was done to the valid request (shown when a case fails). */
  mutation: string
}

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\t',
  '\r\n',
  '0',
  '-1',
  '1e400',
  'NaN',
  'Infinity',
  'null',
  'true',
  'undefined',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  '\uffff',
  '\ufeff',
  '👍🏽',
  'a\u0301',
  '\u202eevil',
  'Ｔｅｓｔ',
  '𝟙𝟚𝟛',
  'ß',
  'İ',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '%00',
  '../../etc/passwd',
  '{{7*7}}',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, sent as plain text
  '${7*7}',
  '\\',
  '"',
  "'",
  '[]',
  '{}',
  'AC_LIVE_x.y',
  'venta,alquiler',
  'VENTA',
  ' venta ',
  '2147483647',
  '2147483648',
  '-2147483649',
  '9007199254740993',
  '1e20',
  '1e-320',
  '0x1F',
  '1_000',
]
const BOUNDARY_NUMBERS = [
  0,
  -0,
  -1,
  1,
  0.5,
  -0.5,
  1e-300,
  -1e-300,
  1e308,
  -1e308,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53,
  2 ** 53 + 2,
  2 ** 63,
  1e21,
  999,
  1000,
  1001,
  50000,
  50001,
]

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom<unknown>(...HOSTILE_STRINGS, ...BOUNDARY_NUMBERS, null, true, false, [], {}, [null], { '': null }, [[[]]]), weight: 6 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 2 },
  { arbitrary: fc.double(), weight: 1 },
  { arbitrary: hugeString(), weight: 1 },
)

function hugeString(): fc.Arbitrary<string> {
  return fc.tuple(fc.constantFrom('x', 'é', '👍', '\u0000', ' ', '<'), fc.integer({ min: 301, max: 120_000 })).map(([c, n]) => c.repeat(n))
}

const BAD_JSON = [
  '',
  ' ',
  '{',
  '}',
  '{"a":1,}',
  "{'a':1}",
  'undefined',
  'NaN',
  '[1,2',
  '\ufeff{}',
  '{"a":1}{"b":2}',
  '1e999999',
  '"\\ud800"',
  '{"a":"\\u0000"}',
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  'null',
  'true',
  '0',
  '"text"',
  '[]',
  '{"a":1',
  '{"a":"\\x41"}',
  '{"a":01}',
  '\u0000',
  '{"a":"b"}\u0000',
  '{"a": tru}',
  '{"a":-}',
  '[' + '{"a":'.repeat(3) + '1' + '}'.repeat(3) + ']',
]
const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  'application/JSON',
  'application/vnd.api+json',
  'application/jsonp',
  '*/*',
  'application/xml',
  'json',
  'application/json, text/plain',
  'application/json;;',
]
const BAD_IDS = [
  '0',
  '-1',
  'abc',
  '1.5',
  '1e3',
  '9999999999999999999999',
  '2147483648',
  '4294967296',
  '%00',
  '%2F',
  '%20',
  '+1',
  '0x10',
  '１',
  '1;DROP TABLE properties',
  '𝟙',
  'null',
  '00001',
  ' 1',
  '1 ',
  'NaN',
]

/** Walks a JSON value: every path to a node (the root is []). */
function pathsOf(value: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at)
  if (Array.isArray(value)) for (const [i, v] of value.entries()) pathsOf(v, [...at, i], out)
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) pathsOf(v, [...at, k], out)
  return out
}

function setAt(root: unknown, path: (string | number)[], fn: (parent: any, key: string | number) => void): unknown {
  const copy = structuredClone(root)
  if (path.length === 0) return copy
  let node: any = copy
  for (const k of path.slice(0, -1)) node = node[k]
  fn(node, path[path.length - 1])
  return copy
}

type Mutation = (r: Base) => FuzzRequest

interface Base {
  op: Operation
  path: string
  query: Record<string, string>
  headers: Record<string, string>
  body: unknown
}

function build(
  r: Base,
  mutation: string,
  overrides: Partial<{ path: string; query: string; headers: Record<string, string>; body: string | undefined }> = {},
): FuzzRequest {
  const query = overrides.query ?? new URLSearchParams(r.query).toString()
  const hasBody = r.op.body !== undefined
  const headers = overrides.headers ?? { ...r.headers, ...(hasBody ? { 'content-type': 'application/json' } : {}) }
  const body = 'body' in overrides ? overrides.body : hasBody ? JSON.stringify(r.body) : undefined
  return { method: r.op.method, url: `http://localhost${overrides.path ?? r.path}${query ? `?${query}` : ''}`, headers, body, mutation }
}

/** The mutations that apply to `op`, each an arbitrary of the change it makes. */
function mutationsFor(op: Operation, pathIds: string[]): { arbitrary: fc.Arbitrary<Mutation>; weight: number }[] {
  const out: { arbitrary: fc.Arbitrary<Mutation>; weight: number }[] = [{ arbitrary: fc.constant((r: Base) => build(r, 'none (valid)')), weight: 4 }]
  if (op.body) {
    out.push(
      {
        weight: 4,
        arbitrary: fc.tuple(fc.nat(), hostileValue).map(([i, v]) => (r: Base) => {
          const paths = pathsOf(r.body)
          const p = paths[i % paths.length]
          const body = p.length === 0 ? v : setAt(r.body, p, (parent, k) => (parent[k] = v))
          return build(r, `body${p.map((k) => `.${k}`).join('')} = ${preview(v)}`, { body: JSON.stringify(body) })
        }),
      },
      {
        weight: 2,
        arbitrary: fc.nat().map((i) => (r: Base) => {
          const paths = pathsOf(r.body).filter((p) => p.length > 0)
          if (paths.length === 0) return build(r, 'body with nothing to remove')
          const p = paths[i % paths.length]
          const body = setAt(r.body, p, (parent, k) => (Array.isArray(parent) ? parent.splice(Number(k), 1) : delete parent[k]))
          return build(r, `body without ${p.join('.')}`, { body: JSON.stringify(body) })
        }),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(
            fc.nat(),
            fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'business_id', 'published_at', 'extra', ''), fc.string({ maxLength: 12 })),
            hostileValue,
          )
          .map(([i, key, v]) => (r: Base) => {
            const objects = pathsOf(r.body).filter((p) => {
              const node = p.reduce((n: any, k) => n?.[k], r.body)
              return node && typeof node === 'object' && !Array.isArray(node)
            })
            if (objects.length === 0) return build(r, 'body has no object to extend')
            const p = objects[i % objects.length]
            // Written as text so "__proto__" arrives as an own key, as an attacker would send it.
            const text = JSON.stringify(r.body, (_key, val) => val)
            const body =
              p.length === 0
                ? text.replace(/^\{/, `{${JSON.stringify(key)}:${JSON.stringify(v)}${text === '{}' ? '' : ','}`)
                : JSON.stringify(setAt(r.body, p, (parent, k) => (parent[k] = { ...parent[k], [key]: v })))
            return build(r, `extra field ${p.join('.')}.${key} = ${preview(v)}`, { body })
          }),
      },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => (r: Base) => build(r, `body replaced by ${preview(v)}`, { body: JSON.stringify(v) })) },
      {
        weight: 2,
        arbitrary: fc
          .oneof(fc.constantFrom(...BAD_JSON), fc.string({ unit: 'binary', maxLength: 60 }), deepNesting())
          .map((text) => (r: Base) => build(r, `bad JSON ${preview(text)}`, { body: text })),
      },
      {
        weight: 2,
        arbitrary: fc.oneof(fc.constantFrom(...CONTENT_TYPES), fc.constant(null)).map((type) => (r: Base) => {
          const headers = { ...r.headers }
          if (type !== null) headers['content-type'] = type
          return build(r, type === null ? 'no Content-Type' : `Content-Type: ${type}`, { headers })
        }),
      },
      {
        weight: 0.2,
        arbitrary: fc.constant((r: Base) =>
          build(r, 'body over 1 MiB', { body: JSON.stringify({ ...(r.body as object), title: 'x'.repeat(1024 * 1024 + 10) }) }),
        ),
      },
      { weight: 0.5, arbitrary: fc.constant((r: Base) => build(r, 'no body', { body: undefined })) },
    )
  }
  const queryParams = op.params.filter((p) => p.in === 'query')
  out.push({
    weight: queryParams.length ? 3 : 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom(...(queryParams.length ? queryParams.map((p) => p.name) : ['limit', 'x'])),
        fc.oneof(
          fc.constantFrom(...HOSTILE_STRINGS),
          fc.string({ unit: 'binary', maxLength: 30 }),
          hugeString().map((s) => s.slice(0, 4000)),
        ),
        fc.constantFrom('replace', 'duplicate', 'raw'),
      )
      .map(([name, value, how]) => (r: Base) => {
        const params = new URLSearchParams(r.query)
        if (how === 'replace') params.set(name, value)
        else if (how === 'duplicate') params.append(name, value)
        const query = how === 'raw' ? `${params.toString()}&${name}=${value.replace(/[#\s]/g, '%20')}%` : params.toString()
        return build(r, `query ${how} ${name}=${preview(value)}`, { query })
      }),
  })
  out.push({
    weight: 1,
    arbitrary: fc
      .constantFrom(
        '&&&',
        '=',
        '==&=',
        'a[b]=1&a[c]=2',
        '%',
        '%E0%A4%A',
        '%FF%FE',
        'limit',
        'limit=&offset=',
        '?',
        '#x',
        'x'.repeat(6000),
        'limit=1&limit=2&limit=3',
        '__proto__[polluted]=1',
        'constructor[prototype][x]=1',
      )
      .map((q) => (r: Base) => build(r, `query string ${preview(q)}`, { query: q })),
  })
  if (pathIds.length) {
    out.push({
      weight: 3,
      arbitrary: fc
        .tuple(
          fc.constantFrom(...pathIds),
          fc.oneof(fc.constantFrom(...BAD_IDS), fc.string({ unit: 'binary', minLength: 1, maxLength: 10 }).map(encodeURIComponent)),
        )
        .map(([name, value]) => (r: Base) => {
          const segments = r.path.split('/')
          const template = op.path.split('/')
          const index = template.indexOf(`{${name}}`)
          segments[index] = value
          return build(r, `path ${name} = ${preview(value)}`, { path: segments.join('/') })
        }),
    })
  }
  out.push({
    weight: 2,
    arbitrary: fc
      .constantFrom<[string, string | null]>(
        ['idempotency-key', ''],
        ['idempotency-key', ' '],
        ['idempotency-key', 'k'.repeat(201)],
        ['idempotency-key', 'k'.repeat(200)],
        ['idempotency-key', 'ü\u00ff'],
        ['x-api-key', ''],
        ['x-api-key', 'AC_LIVE_'],
        ['x-api-key', 'ac_live_aaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'],
        ['x-api-key', 'x'.repeat(5000)],
        ['x-api-key', null],
        ['authorization', 'Bearer token'],
        ['x-request-id', 'r'.repeat(500)],
        ['x-request-id', '../../x'],
        ['accept', 'text/html'],
        ['accept-encoding', 'gzip;q=2'],
      )
      .map(([name, value]) => (r: Base) => {
        const headers: Record<string, string> = { ...r.headers, ...(op.body ? { 'content-type': 'application/json' } : {}) }
        if (value === null) delete headers[name]
        else headers[name] = value
        return build(r, `header ${name}: ${value === null ? '(removed)' : preview(value)}`, { headers })
      }),
  })
  return out
}

function deepNesting(): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom('[', '{"a":'), fc.integer({ min: 1000, max: 200_000 }))
    .map(([open, n]) => open.repeat(n) + '1' + (open === '[' ? ']' : '}').repeat(n))
}

function preview(v: unknown): string {
  const s = typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v))
  return s.length > 60 ? `${s.slice(0, 57)}… (${s.length} chars)` : s
}

export interface OperationFixture {
  /** Real ids per path parameter (rows of the key's business). */
  ids: Record<string, number | string>
  /** Overrides for generated values by field or query parameter name. */
  overrides?: Record<string, fc.Arbitrary<unknown>>
  apiKey: string
}

/** Arbitrary of hostile requests for `op`. */
export function requestsFor(doc: Json, op: Operation, fixture: OperationFixture): fc.Arbitrary<FuzzRequest> {
  const pathIds = op.params.filter((p) => p.in === 'path').map((p) => p.name)
  const pathArb = fc.record(
    Object.fromEntries(
      pathIds.map((name) => {
        const schema = op.params.find((p) => p.name === name)!.schema
        const arb = fc.oneof({ arbitrary: fc.constant(fixture.ids[name]), weight: 8 }, { arbitrary: arbitraryOf(doc, schema), weight: 1 })
        return [name, arb]
      }),
    ),
  )
  const queryParams = op.params.filter((p) => p.in === 'query')
  const queryArb = fc.record(Object.fromEntries(queryParams.map((p) => [p.name, (fixture.overrides?.[p.name] ?? arbitraryOf(doc, p.schema)).map(String)])), {
    requiredKeys: queryParams.filter((p) => p.required).map((p) => p.name),
  })
  const headerParams = op.params.filter((p) => p.in === 'header')
  const headerArb = fc.record(
    Object.fromEntries(
      headerParams.map((p) => [
        p.name,
        p.name === 'idempotency-key'
          ? fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme-ascii' }).filter((s) => s.trim() === s && s.length > 0)
          : arbitraryOf(doc, p.schema).map(String),
      ]),
    ),
    { requiredKeys: headerParams.filter((p) => p.required).map((p) => p.name) },
  )
  const bodyArb = op.body ? bodyOf(doc, op.body, fixture) : fc.constant(undefined)
  return fc
    .tuple(
      pathArb,
      queryArb,
      headerArb,
      bodyArb,
      fc.oneof(...mutationsFor(op, pathIds).map((m) => ({ arbitrary: m.arbitrary, weight: Math.round(m.weight * 10) }))),
    )
    .map(([ids, query, headers, body, mutate]) => {
      const path = op.path.replace(/\{([^}]+)\}/g, (_, name) => encodeURIComponent(String(ids[name])))
      return mutate({
        op,
        path,
        query: query as Record<string, string>,
        headers: { 'x-api-key': fixture.apiKey, ...(headers as Record<string, string>) },
        body,
      })
    })
}

function bodyOf(doc: Json, body: NonNullable<Operation['body']>, fixture: OperationFixture): fc.Arbitrary<unknown> {
  const generated = arbitraryOf(doc, body.schema as Schema, { overrides: fixture.overrides })
  // The document's examples pass the rules the schema cannot express, so mutations of them
  // reach the deeper code (database writes); generated bodies cover the schema's breadth.
  const examples = body.examples.map((e) => withIds(structuredClone(e), fixture.ids))
  return examples.length ? fc.oneof({ arbitrary: fc.constantFrom(...examples), weight: 1 }, { arbitrary: generated, weight: 1 }) : generated
}

/** The example's ids (`property_id: 42`) replaced by real rows of the business, at any depth. */
function withIds(value: unknown, ids: Record<string, number | string>): unknown {
  if (Array.isArray(value)) return value.map((v) => withIds(v, ids))
  if (!value || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k in ids && typeof v === 'number' ? ids[k] : withIds(v, ids)]))
}
