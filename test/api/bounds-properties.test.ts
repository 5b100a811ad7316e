/**
 * Request bounds of the listings: every string and array of the property requests and of the
 * GET /properties query has a bound stated in the OpenAPI document (contract §15 §6), and one
 * past each bound is a 422 naming the field. The cases are generated from the served document,
 * so a field added later without a bound fails here.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createProperty, propertyBody } from '../helpers/properties'

type Schema = Record<string, any>
type Path = (string | number)[]

let ctx: TestContext
let biz: SeededBusiness
let doc: any
let propertyId: number
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  doc = (await call(ctx.app, 'GET', '/openapi.json')).body
  propertyId = await createProperty(ctx, biz.apiKey)
})
afterAll(() => ctx.close())

/** Follows `$ref`s into `components` (the document may name its schemas). */
const deref = (s: Schema): Schema =>
  s?.$ref
    ? deref(
        s.$ref
          .slice(2)
          .split('/')
          .reduce((n: any, k: string) => n[k], doc),
      )
    : s
const bodySchema = (path: string, method: string): Schema => deref(doc.paths[path][method].requestBody.content['application/json'].schema)
const typesOf = (s: Schema): string[] => (s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type])
const branches = (s: Schema): Schema[] => [deref(s), ...(deref(s).anyOf ?? deref(s).oneOf ?? []).flatMap(branches)]
const isEnum = (s: Schema) => s.enum !== undefined || s.const !== undefined

/** The branch of `s` that is an object (or array), ignoring `null`. */
const objectBranch = (s: Schema) => branches(s).find((b) => typesOf(b).includes('object'))!
const arrayBranch = (s: Schema) => branches(s).find((b) => typesOf(b).includes('array'))!

/** A small value valid against `s`: required keys only, minimum lengths and counts. */
function sample(schema: Schema): unknown {
  const s = deref(schema)
  if (s.const !== undefined) return s.const
  if (s.enum) return s.enum.find((v: unknown) => v !== null)
  if (s.anyOf ?? s.oneOf) return sample((s.anyOf ?? s.oneOf).find((b: Schema) => !typesOf(b).includes('null') || typesOf(b).length > 1))
  const type = typesOf(s).find((t) => t !== 'null')
  switch (type) {
    case 'object':
      return Object.fromEntries((s.required ?? []).map((k: string) => [k, sample(s.properties[k])]))
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => sample(s.items))
    case 'string':
      return s.pattern ? 'A' : 'x'.repeat(Math.max(1, s.minLength ?? 1))
    case 'integer':
    case 'number':
      return Math.max(s.minimum ?? 1, 1)
    case 'boolean':
      return true
    default:
      throw new Error(`no sample for ${JSON.stringify(s)}`)
  }
}

interface Bounded {
  path: Path
  kind: 'string' | 'array'
  bound: number
  schema: Schema
}

/** Every string and array reachable in `s`, with its bound (undefined when it has none). */
function walk(s: Schema, path: Path, out: (Bounded | { path: Path; kind: 'string' | 'array'; bound: undefined })[]) {
  for (const b of branches(s)) {
    const types = typesOf(b)
    if (types.includes('string') && !isEnum(b)) out.push({ path, kind: 'string', bound: b.maxLength, schema: b } as Bounded)
    if (types.includes('array')) {
      out.push({ path, kind: 'array', bound: b.maxItems, schema: b } as Bounded)
      if (b.items) walk(b.items, [...path, 0], out)
    }
    if (types.includes('object')) for (const [k, v] of Object.entries<Schema>(b.properties ?? {})) walk(v, [...path, k], out)
  }
  return out
}

/** `base` with `value` at `path`, creating the parents (and array items) that `schema` needs. */
function setAt(base: unknown, schema: Schema, path: Path, value: unknown): unknown {
  if (path.length === 0) return value
  const [head, ...rest] = path
  if (typeof head === 'number') {
    const items = deref(arrayBranch(schema).items)
    const arr = Array.isArray(base) ? [...base] : []
    arr[head] = setAt(arr[head] ?? sample(items), items, rest, value)
    return arr
  }
  const obj = objectBranch(schema)
  const current = base && typeof base === 'object' ? { ...(base as object) } : (sample(obj) as Record<string, unknown>)
  ;(current as Record<string, unknown>)[head] = setAt((current as Record<string, unknown>)[head], deref(obj.properties[head]), rest, value)
  return current
}

const overBound = (b: Bounded): unknown => (b.kind === 'string' ? 'x'.repeat(b.bound + 1) : Array.from({ length: b.bound + 1 }, () => sample(b.schema.items)))
const locs = (res: { body: any }) => (res.body?.errors ?? []).map((e: any) => e.loc.join('.'))

describe('every request string and array has a documented bound', () => {
  test('POST and PATCH /properties bodies', () => {
    for (const [path, method] of [
      ['/v1/properties', 'post'],
      ['/v1/properties/{property_id}', 'patch'],
    ] as const) {
      const unbounded = walk(bodySchema(path, method), [], [])
        .filter((b) => b.bound === undefined)
        .map((b) => `${b.kind} ${b.path.join('.')}`)
      expect(unbounded, `${method} ${path}`).toEqual([])
    }
  })

  test('GET /properties query', () => {
    const params: any[] = doc.paths['/v1/properties'].get.parameters
    const unbounded = params.filter((p) => walk(p.schema, [p.name], []).some((b) => b.bound === undefined)).map((p) => p.name)
    expect(unbounded).toEqual([])
  })
})

describe('one past each bound is a 422 naming the field', () => {
  test('POST /properties: every string and array of the body', async () => {
    const schema = bodySchema('/v1/properties', 'post')
    const cases = walk(schema, [], []) as Bounded[]
    expect(cases.length).toBeGreaterThan(30)
    const failures: string[] = []
    for (const b of cases) {
      const body = setAt(propertyBody(), schema, b.path, overBound(b))
      const res = await call(ctx.app, 'POST', '/v1/properties', { key: biz.apiKey, body })
      const loc = ['body', ...b.path].join('.')
      if (res.status !== 422 || !locs(res).includes(loc)) failures.push(`${loc} (${b.kind} > ${b.bound}): ${res.status} ${locs(res).join(',')}`)
      // The bound itself is accepted (strings; arrays at their bound may break rules such as unique keys).
      if (b.kind === 'string') {
        const ok = await call(ctx.app, 'POST', '/v1/properties', {
          key: biz.apiKey,
          body: setAt(propertyBody(), schema, b.path, b.schema.pattern ? 'A' : 'x'.repeat(b.bound)),
        })
        if (ok.status !== 201) failures.push(`${loc} at its bound ${b.bound}: ${ok.status} ${ok.text.slice(0, 200)}`)
      }
    }
    expect(failures).toEqual([])
  })

  test('PATCH /properties/{id}: every string and array of the body, each sent alone', async () => {
    const schema = bodySchema('/v1/properties/{property_id}', 'patch')
    const failures: string[] = []
    for (const b of walk(schema, [], []) as Bounded[]) {
      const body = setAt({}, schema, b.path, overBound(b))
      const res = await call(ctx.app, 'PATCH', `/v1/properties/${propertyId}`, { key: biz.apiKey, body })
      const loc = ['body', ...b.path].join('.')
      if (res.status !== 422 || !locs(res).includes(loc)) failures.push(`${loc} (${b.kind} > ${b.bound}): ${res.status} ${locs(res).join(',')}`)
    }
    expect(failures).toEqual([])
  })

  test('GET /properties: every string parameter', async () => {
    const failures: string[] = []
    for (const p of doc.paths['/v1/properties'].get.parameters) {
      for (const b of walk(p.schema, [], []) as Bounded[]) {
        const res = await call(ctx.app, 'GET', `/v1/properties?${p.name}=${'x'.repeat(b.bound + 1)}`, { key: biz.apiKey })
        if (res.status !== 422 || !locs(res).includes(`query.${p.name}`)) failures.push(`${p.name} > ${b.bound}: ${res.status} ${locs(res).join(',')}`)
      }
    }
    expect(failures).toEqual([])
  })
})

describe('locations: vertices per polygon and number of areas', () => {
  const list = (areas: unknown[]) => call(ctx.app, 'GET', `/v1/properties?locations=${encodeURIComponent(JSON.stringify(areas))}`, { key: biz.apiKey })
  /** A closed-ish ring of `n` distinct vertices around (40, -3). */
  const ring = (n: number) => Array.from({ length: n }, (_, i) => [40 + Math.sin((2 * Math.PI * i) / n), -3 + Math.cos((2 * Math.PI * i) / n)])
  const param = () => deref(doc.paths['/v1/properties'].get.parameters.find((p: any) => p.name === 'locations').schema)
  const limitOf = (what: RegExp) => Number(param().description.replace(/,/g, '').match(what)?.[1])

  test('the limits are stated in the parameter description', () => {
    expect(limitOf(/at most (\d+) vertices/)).toBe(1000)
    expect(limitOf(/at most (\d+) areas/)).toBeGreaterThan(0)
  })

  test('a polygon of 1,000 vertices is accepted; 1,001 is a 422 on locations', async () => {
    for (const type of ['polygon', 'rectangle']) {
      const ok = await list([{ geometry: { type, coordinates: ring(1000) } }])
      expect(ok.status, ok.text.slice(0, 300)).toBe(200)
      const res = await list([{ geometry: { type, coordinates: ring(1001) } }])
      expect(res.status, res.text.slice(0, 300)).toBe(422)
      expect(locs(res)).toEqual(['query.locations'])
    }
  })

  test('one area more than the limit is a 422 on locations', async () => {
    const max = limitOf(/at most (\d+) areas/)
    const circle = { geometry: { type: 'circle', center: { lat: 40, lng: -3 }, radius: 1000 } }
    expect((await list(Array.from({ length: max }, () => circle))).status).toBe(200)
    const res = await list(Array.from({ length: max + 1 }, () => circle))
    expect(res.status, res.text.slice(0, 300)).toBe(422)
    expect(locs(res)).toEqual(['query.locations'])
  })
})
