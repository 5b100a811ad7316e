/**
 * The served OpenAPI 3.1 document as test material: its operations, a small JSON Schema
 * (2020-12 subset) validator for responses, and a converter from request schemas to
 * fast-check arbitraries of valid values. ajv is not a dependency; the keywords handled here
 * are the ones the document uses (the validator fails loudly on any other, so a new keyword
 * cannot be silently ignored).
 */
import fc from 'fast-check'
import type { App } from '../../api/app'

export type Json = any
export type Schema = Record<string, any> | boolean

export interface Operation {
  method: string
  path: string
  operationId: string
  /** `x-required-scope`: null for operations any active key may call. */
  scope: string | null
  params: { name: string; in: 'path' | 'query' | 'header' | 'cookie'; required: boolean; schema: Schema }[]
  /** The body's schema with its `$ref` to the named component followed, as for `responses`. */
  body: { schema: Schema; required: boolean; examples: Json[] } | undefined
  /** Each media type's schema with its top `$ref` followed (nested ones are kept). */
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>
}

export async function loadDocument(app: App): Promise<Json> {
  // Elysia finds the path after a fixed offset, so the host must be a real-looking one.
  const res = await app.handle(new Request('http://localhost/openapi.json'))
  if (res.status !== 200) throw new Error(`/openapi.json answered ${res.status}`)
  return res.json()
}

/** Every /v1 operation of the document. */
export function operationsOf(doc: Json): Operation[] {
  const out: Operation[] = []
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    if (!path.startsWith('/v1/')) continue
    for (const [method, op] of Object.entries<Json>(item)) {
      // CORS preflights take no key and no input: their own tests cover them (test/api/forms-cors.test.ts).
      if (method === 'options') continue
      const json = op.requestBody?.content?.['application/json']
      // Bodies and answers are `$ref`s to named components (whose examples live there).
      const bodySchema = json?.schema ? (resolve(doc, json.schema) as Json) : undefined
      const responses = Object.fromEntries(
        Object.entries<Json>(op.responses ?? {}).map(([status, r]) => [
          status,
          {
            ...r,
            ...(r.content
              ? {
                  content: Object.fromEntries(
                    Object.entries<Json>(r.content).map(([type, media]) => [type, media.schema ? { ...media, schema: resolve(doc, media.schema) } : media]),
                  ),
                }
              : {}),
          },
        ]),
      )
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        scope: op['x-required-scope'] ?? null,
        // Header names are case-insensitive (RFC 9110): the document spells them `Idempotency-Key`,
        // the harness keys them in lower case as fetch's Headers does.
        params: (op.parameters ?? []).map((p: Json) => ({
          name: p.in === 'header' ? p.name.toLowerCase() : p.name,
          in: p.in,
          required: !!p.required,
          schema: p.schema ?? {},
        })),
        body: json
          ? {
              schema: bodySchema ?? {},
              required: !!op.requestBody.required,
              examples: bodySchema?.examples ?? (json.example !== undefined ? [json.example] : []),
            }
          : undefined,
        responses,
      })
    }
  }
  return out
}

export const pathParamsOf = (op: Operation) => op.params.filter((p) => p.in === 'path').map((p) => p.name)

export function fillPath(path: string, values: Record<string, string | number>): string {
  return path.replace(/\{([^}]+)\}/g, (_, name) => {
    if (!(name in values)) throw new Error(`no value for path parameter ${name}`)
    return encodeURIComponent(String(values[name]))
  })
}

/** `schema` with its `$ref`s followed (sibling keywords of a `$ref` kept). */
export function resolve(doc: Json, schema: Schema): Schema {
  let s = schema
  for (let depth = 0; typeof s === 'object' && s.$ref; depth++) {
    if (depth > 20) throw new Error(`$ref loop at ${s.$ref}`)
    const ref: string = s.$ref
    if (!ref.startsWith('#/')) throw new Error(`external $ref ${ref}`)
    const target = ref
      .slice(2)
      .split('/')
      .reduce((node: Json, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc)
    if (target === undefined) throw new Error(`unresolved $ref ${ref}`)
    const { $ref, ...rest } = s
    void $ref
    s = Object.keys(rest).length ? { ...target, ...rest } : target
  }
  return s
}

// ---------------------------------------------------------------------------------------------
// Validation

const ANNOTATIONS = new Set([
  'title',
  'description',
  'examples',
  'example',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$id',
  '$schema',
  '$comment',
  'x-required-scope',
  'contentMediaType',
  'contentEncoding',
])
const HANDLED = new Set([
  'type',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'minProperties',
  'maxProperties',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  '$ref',
])

const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:?\d{2})$/
const FORMATS: Record<string, (v: string) => boolean> = {
  'date-time': (v) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)),
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v),
  email: (v) => /^[^\s@]+@[^\s@]+$/.test(v),
  uri: (v) => URL.canParse(v),
  url: (v) => URL.canParse(v),
  uuid: (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
}

function typeOf(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number'
  return typeof v
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))
}
function canonical(v: any): any {
  if (Array.isArray(v)) return v.map(canonical)
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical(v[k])]),
    )
  return v
}

const codePoints = (s: string) => {
  let n = 0
  for (const _ of s) n++
  return n
}

/** Errors of `value` against `schema` (empty when valid), each with its JSON path. */
export function validate(doc: Json, schema: Schema, value: unknown, at = '$'): string[] {
  if (schema === true) return []
  if (schema === false) return [`${at}: no value allowed`]
  const s = resolve(doc, schema) as Record<string, any>
  for (const k of Object.keys(s))
    if (!HANDLED.has(k) && !ANNOTATIONS.has(k) && !k.startsWith('x-')) throw new Error(`validator: unsupported keyword "${k}" at ${at}`)
  const errors: string[] = []
  const t = typeOf(value)
  if (s.type !== undefined) {
    const types: string[] = Array.isArray(s.type) ? s.type : [s.type]
    if (!types.some((want) => want === t || (want === 'number' && t === 'integer'))) return [`${at}: expected ${types.join('|')}, got ${t}`]
  }
  if (s.const !== undefined && !deepEqual(s.const, value)) errors.push(`${at}: expected ${JSON.stringify(s.const)}`)
  if (s.enum && !s.enum.some((e: unknown) => deepEqual(e, value))) errors.push(`${at}: ${JSON.stringify(value)} not in enum`)
  if (s.anyOf && !s.anyOf.some((b: Schema) => validate(doc, b, value, at).length === 0)) errors.push(`${at}: matches no anyOf branch`)
  if (s.oneOf && s.oneOf.filter((b: Schema) => validate(doc, b, value, at).length === 0).length !== 1)
    errors.push(`${at}: does not match exactly one oneOf branch`)
  if (s.allOf) for (const b of s.allOf) errors.push(...validate(doc, b, value, at))
  if (s.not && validate(doc, s.not, value, at).length === 0) errors.push(`${at}: matches "not"`)
  if (t === 'string') {
    const v = value as string
    const len = codePoints(v)
    if (s.minLength !== undefined && len < s.minLength) errors.push(`${at}: shorter than ${s.minLength}`)
    if (s.maxLength !== undefined && len > s.maxLength) errors.push(`${at}: longer than ${s.maxLength}`)
    if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(v)) errors.push(`${at}: does not match ${s.pattern}`)
    if (s.format !== undefined && FORMATS[s.format] && !FORMATS[s.format](v)) errors.push(`${at}: not a ${s.format}`)
  }
  if (t === 'number' || t === 'integer') {
    const v = value as number
    if (s.minimum !== undefined && v < s.minimum) errors.push(`${at}: below ${s.minimum}`)
    if (s.maximum !== undefined && v > s.maximum) errors.push(`${at}: above ${s.maximum}`)
    if (s.exclusiveMinimum !== undefined && v <= s.exclusiveMinimum) errors.push(`${at}: not above ${s.exclusiveMinimum}`)
    if (s.exclusiveMaximum !== undefined && v >= s.exclusiveMaximum) errors.push(`${at}: not below ${s.exclusiveMaximum}`)
    if (s.multipleOf !== undefined && !Number.isInteger(v / s.multipleOf)) errors.push(`${at}: not a multiple of ${s.multipleOf}`)
  }
  if (t === 'array') {
    const v = value as unknown[]
    if (s.minItems !== undefined && v.length < s.minItems) errors.push(`${at}: fewer than ${s.minItems} items`)
    if (s.maxItems !== undefined && v.length > s.maxItems) errors.push(`${at}: more than ${s.maxItems} items`)
    if (s.uniqueItems && new Set(v.map((x) => JSON.stringify(canonical(x)))).size !== v.length) errors.push(`${at}: items not unique`)
    const prefix: Schema[] = s.prefixItems ?? []
    v.forEach((item, i) => {
      const itemSchema = i < prefix.length ? prefix[i] : s.items
      if (itemSchema !== undefined) errors.push(...validate(doc, itemSchema, item, `${at}[${i}]`))
    })
  }
  if (t === 'object') {
    const v = value as Record<string, unknown>
    const keys = Object.keys(v)
    if (s.minProperties !== undefined && keys.length < s.minProperties) errors.push(`${at}: fewer than ${s.minProperties} properties`)
    if (s.maxProperties !== undefined && keys.length > s.maxProperties) errors.push(`${at}: more than ${s.maxProperties} properties`)
    for (const r of s.required ?? []) if (!(r in v)) errors.push(`${at}.${r}: required`)
    for (const k of keys) {
      if (s.properties && k in s.properties) {
        errors.push(...validate(doc, s.properties[k], v[k], `${at}.${k}`))
        continue
      }
      const patterns = Object.entries<Schema>(s.patternProperties ?? {}).filter(([p]) => new RegExp(p, 'u').test(k))
      for (const [, ps] of patterns) errors.push(...validate(doc, ps, v[k], `${at}.${k}`))
      if (patterns.length === 0 && s.additionalProperties !== undefined) errors.push(...validate(doc, s.additionalProperties, v[k], `${at}.${k}`))
    }
  }
  return errors
}

// ---------------------------------------------------------------------------------------------
// Valid values

export interface ArbitraryOptions {
  /** Cap on generated string lengths, so valid bodies stay small (huge strings are a mutation). */
  maxString?: number
  maxItems?: number
  /** Values to use for named fields (e.g. real ids of seeded rows). */
  overrides?: Record<string, fc.Arbitrary<unknown>>
}

const INT32_MAX = 2 ** 31 - 1

/** A fast-check arbitrary of values valid against `schema` (within the subset above). */
export function arbitraryOf(doc: Json, schema: Schema, options: ArbitraryOptions = {}, depth = 0): fc.Arbitrary<unknown> {
  if (schema === true || depth > 8) return fc.constant(null)
  if (schema === false) throw new Error('no value is valid against false')
  const s = resolve(doc, schema) as Record<string, any>
  if (s.const !== undefined) return fc.constant(s.const)
  if (s.enum) return fc.constantFrom(...s.enum)
  if (s.anyOf || s.oneOf) return fc.oneof(...(s.anyOf ?? s.oneOf).map((b: Schema) => arbitraryOf(doc, b, options, depth + 1)))
  if (s.allOf) return arbitraryOf(doc, Object.assign({}, ...s.allOf.map((b: Schema) => resolve(doc, b))), options, depth + 1)
  const types: string[] = s.type === undefined ? ['unknown'] : Array.isArray(s.type) ? s.type : [s.type]
  const arbs = types.map((type) => arbitraryOfType(doc, s, type, options, depth))
  return arbs.length === 1 ? arbs[0] : fc.oneof(...arbs)
}

function arbitraryOfType(doc: Json, s: Record<string, any>, type: string, options: ArbitraryOptions, depth: number): fc.Arbitrary<unknown> {
  const maxString = options.maxString ?? 24
  const maxItems = options.maxItems ?? 4
  switch (type) {
    case 'null':
      return fc.constant(null)
    case 'boolean':
      return fc.boolean()
    case 'integer': {
      const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : Number.MIN_SAFE_INTEGER)
      const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : Number.MAX_SAFE_INTEGER)
      // Bounds are where mistakes live: the limits themselves, and the edges of the storage
      // types (int4, int8, doubles) when the schema allows them, weigh as much as the inside.
      const edges = [min, max, min + 1, max - 1, 0, INT32_MAX, INT32_MAX + 1, -INT32_MAX - 2, 2 ** 53 - 1].filter((n) => n >= min && n <= max)
      return fc.oneof(fc.constantFrom(...edges), fc.integer({ min: Math.max(min, -INT32_MAX), max: Math.min(max, INT32_MAX) }), fc.integer({ min, max }))
    }
    case 'number': {
      const min = s.minimum ?? s.exclusiveMinimum ?? -1e9
      const max = s.maximum ?? s.exclusiveMaximum ?? 1e9
      const inner = fc
        .double({ min, max, noNaN: true, noDefaultInfinity: true })
        .filter((n) => (s.exclusiveMinimum === undefined || n > s.exclusiveMinimum) && (s.exclusiveMaximum === undefined || n < s.exclusiveMaximum))
      const edges = [min, max].filter(
        (n) => (s.exclusiveMinimum === undefined || n > s.exclusiveMinimum) && (s.exclusiveMaximum === undefined || n < s.exclusiveMaximum),
      )
      return edges.length
        ? fc.oneof(
            fc.constantFrom(...edges),
            fc.integer({ min: Math.ceil(min), max: Math.floor(Math.min(max, 1e9)) }).filter((n) => n <= max),
            inner,
          )
        : inner
    }
    case 'string': {
      const minLength = s.minLength ?? 0
      const maxLength = Math.max(minLength, Math.min(s.maxLength ?? maxString, maxString))
      if (s.format === 'date-time')
        return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString())
      if (s.format === 'email') return fc.emailAddress()
      if (s.format === 'uri' || s.format === 'url') return fc.webUrl()
      if (s.pattern !== undefined)
        return fc
          .stringMatching(new RegExp(s.pattern, 'u'))
          .filter((v) => codePoints(v) >= minLength && (s.maxLength === undefined || codePoints(v) <= s.maxLength))
      return fc.oneof(
        { arbitrary: fc.string({ minLength, maxLength, unit: 'grapheme-ascii' }), weight: 3 },
        { arbitrary: fc.string({ minLength, maxLength, unit: 'binary' }), weight: 1 },
      )
    }
    case 'array': {
      const item = s.items === undefined ? fc.jsonValue({ maxDepth: 1 }) : arbitraryOf(doc, s.items, options, depth + 1)
      const minLength = s.minItems ?? 0
      const maxLength = Math.max(minLength, Math.min(s.maxItems ?? maxItems, maxItems))
      return s.uniqueItems ? fc.uniqueArray(item, { minLength, maxLength, selector: (v) => JSON.stringify(v) }) : fc.array(item, { minLength, maxLength })
    }
    case 'object': {
      const props = s.properties ?? {}
      const model: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [k, v] of Object.entries<Schema>(props)) model[k] = options.overrides?.[k] ?? arbitraryOf(doc, v, options, depth + 1)
      const record = fc.record(model, { requiredKeys: (s.required ?? []).filter((k: string) => k in model) })
      if (!s.additionalProperties || s.additionalProperties === true || Object.keys(props).length) return record
      // A map (e.g. `specs` extras): a few entries of the value schema.
      const value = arbitraryOf(doc, s.additionalProperties, options, depth + 1)
      return fc.dictionary(fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme-ascii' }), value, { maxKeys: 3 })
    }
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

/** The document's own example when it has one (what integrators copy), else a generated valid value. */
export function exampleOf(doc: Json, schema: Schema, seed = 1): unknown {
  const s = resolve(doc, schema) as Record<string, any>
  if (Array.isArray(s.examples) && s.examples.length) return structuredClone(s.examples[0])
  if (s.example !== undefined) return structuredClone(s.example)
  return fc.sample(arbitraryOf(doc, schema), { seed, numRuns: 1 })[0]
}
