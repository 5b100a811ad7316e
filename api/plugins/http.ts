/**
 * Cross-cutting HTTP behaviour for every response, errors included (contract §6): request id,
 * `Cache-Control: no-store`, body size and content-type rules, problem+json errors, one JSON log
 * line and the metrics per request.
 */
import { Elysia, ParseError, ValidationError } from 'elysia'
import { randomUUID } from 'node:crypto'
import { AppError, ERROR_CODES, type ErrorCode, type FieldError } from '../../shared/platform/errors'
import type { AppDeps } from '../deps'
import type { AuthContext } from '../../shared/access/key-store'

/** api-spec/contract §6: larger JSON bodies are refused with 413. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024

/**
 * Deeper JSON is refused before validation: validating (and describing the errors of) very deep
 * values costs time quadratic in the depth, so a 40 KB body of nested brackets would hold a core
 * for seconds. Real bodies nest under 10 levels.
 */
export const MAX_JSON_DEPTH = 64

export interface RequestMeta {
  id: string
  start: number
  /** Under `/v1/`: authenticated, JSON bodies read and checked here. */
  api: boolean
  auth?: AuthContext
  status?: number
  /** The JSON body escapes a NUL or a lone surrogate somewhere (PostgreSQL text and jsonb cannot store them). */
  bodyHasNul?: boolean
  /** The JSON body as text, read once here; the parse hook hands Elysia its value. */
  bodyText?: string
}

const metaByRequest = new WeakMap<Request, RequestMeta>()
export const requestMeta = (request: Request): RequestMeta | undefined => metaByRequest.get(request)

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Connection-level failures of PostgreSQL or Redis: the request may succeed later (503).
 * COMMIT_ROLLED_BACK (patches/README.md §5): the transaction's COMMIT was answered ROLLBACK, so
 * nothing was written and a retry is safe.
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED',
  'CONNECTION_DESTROYED', 'COMMIT_ROLLED_BACK', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006',
])

export function isUnavailableError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true
    const msg = (e as { message?: unknown }).message
    // ioredis reports a closed connection without a code.
    if ((e as { name?: string }).name === 'MaxRetriesPerRequestError' || msg === 'Connection is closed.' || (typeof msg === 'string' && msg.startsWith("Stream isn't writeable"))) return true
  }
  return false
}

/** What an operator needs from a connection-level failure: the driver's code and its own message, not the query's. */
function unavailableCause(error: unknown): { code?: string; error: string } {
  let root: unknown = error
  for (let depth = 0; depth < 4 && (root as { cause?: unknown })?.cause; depth++) root = (root as { cause: unknown }).cause
  const code = (root as { code?: unknown })?.code
  return { ...(typeof code === 'string' ? { code } : {}), error: String((root as Error)?.message ?? root) }
}

export function problemBody(code: ErrorCode, detail: string, requestId: string, extra: Record<string, unknown> = {}) {
  const { status, title } = ERROR_CODES[code]
  return { type: `urn:problem-type:${code.replace(/_/g, '-')}`, title, status, detail, code, request_id: requestId, ...extra }
}

function problemResponse(status: number, body: unknown, requestId: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store', 'x-request-id': requestId, ...headers },
  })
}

export function httpPlugin(deps: Pick<AppDeps, 'logger' | 'metrics' | 'keys'>) {
  return new Elysia({ name: 'http' })
    .onRequest(async ({ request, set }) => {
      const incoming = request.headers.get('x-request-id')
      const id = incoming && REQUEST_ID_RE.test(incoming) ? incoming : randomUUID()
      const meta: RequestMeta = { id, start: performance.now(), api: pathOf(request.url).startsWith('/v1/') }
      metaByRequest.set(request, meta)
      set.headers['x-request-id'] = id
      set.headers['cache-control'] = 'no-store'
      if (!meta.api) return
      // Authentication is route-independent and reads headers only, so it runs first: a bad key
      // is a 401 whatever else is wrong with the request, and no byte of an anonymous body is
      // ever read. Scopes are checked per route (plugins/auth.ts).
      meta.auth = await deps.keys.authenticate(request.headers)
      if (checkJsonBody(request)) await inspectJsonBody(request, meta)
    })
    // The body was read once by inspectJsonBody (the stream is consumed); parse that text.
    // Outside /v1 the only body is the local storage PUT, which streams the raw request itself
    // (a route's `parse: 'none'` no longer applies once a global parse hook exists).
    .onParse({ as: 'global' }, ({ request }) => {
      const meta = metaByRequest.get(request)
      if (!meta?.api) return null
      const text = meta.bodyText
      if (text === undefined) return
      try {
        return PRIMITIVE_KEY_RE.test(text) ? JSON.parse(text, keepConvertible) : JSON.parse(text)
      } catch (error) {
        throw new ParseError(error as Error)
      }
    })
    // After authentication, scope and schema validation, so 401, 403 and the schema's 422 keep
    // their precedence; before any handler reaches the database.
    .onBeforeHandle({ as: 'global' }, ({ request, query, body }) => {
      const meta = metaByRequest.get(request)
      if (!meta || !pathOf(request.url).startsWith('/v1/')) return
      const errors: FieldError[] = []
      if (request.url.includes('%00')) {
        for (const [name, value] of Object.entries(query ?? {})) if (containsNul(value)) errors.push(nulError(['query', name]))
      }
      if (meta.bodyHasNul) findNul(body, ['body'], errors)
      if (errors.length) throw new AppError('validation', errors.length === 1 ? `${errors[0].loc.join('.')}: ${errors[0].msg}` : `${errors.length} invalid fields: ${errors.map((e) => e.loc.join('.')).join(', ')}`, { errors })
    })
    .onError({ as: 'global' }, ({ request, error, code, params, query }) => {
      const meta: RequestMeta = metaByRequest.get(request) ?? { id: randomUUID(), start: performance.now(), api: pathOf(request.url).startsWith('/v1/') }
      metaByRequest.set(request, meta)
      const { status, body, headers } = toProblem(error, code, request, meta.id, deps, { path: params, query })
      meta.status = status
      return problemResponse(status, body, meta.id, headers)
    })
    .onAfterResponse({ as: 'global' }, (ctx) => {
      const { request, set } = ctx
      const meta = metaByRequest.get(request)
      if (!meta) return
      const status = meta.status ?? (typeof set.status === 'number' ? set.status : 200)
      const ms = performance.now() - meta.start
      const route = (ctx as { route?: string }).route || 'unmatched'
      deps.metrics.observeRequest(request.method, route, status, ms / 1000)
      deps.logger.info('request', {
        request_id: meta.id,
        method: request.method,
        route,
        status,
        latency_ms: Math.round(ms * 100) / 100,
        key_id: meta.auth?.keyId,
        business_id: meta.auth?.business.id,
      })
    })
}

function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const q = url.indexOf('?', start)
  return q === -1 ? url.slice(start) : url.slice(start, q)
}

const JSON_TYPE_RE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i

/**
 * Reads the JSON body once, before Elysia parses it: enforces the 1 MiB limit on the bytes
 * actually sent (a chunked request has no Content-Length to check up front), and refuses invalid
 * UTF-8 and bodies nested deeper than MAX_JSON_DEPTH with a 422 naming the body. The text is
 * kept for the parse hook; reading a clone instead halved the ingest throughput (a teed stream
 * per request).
 */
async function inspectJsonBody(request: Request, meta: RequestMeta): Promise<void> {
  const bytes = await readBodyAtMost(request, MAX_JSON_BODY_BYTES)
  const invalid = (msg: string, type: string) => new AppError('validation', msg, { errors: [{ loc: ['body'], msg, type }] })
  let text: string
  try {
    text = UTF8.decode(bytes)
  } catch {
    throw invalid('Request body is not valid UTF-8', 'json_invalid')
  }
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw invalid(`JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`, 'json_too_deep')
  // Raw bytes were valid UTF-8, so only a `\u` escape can produce NUL or a lone surrogate.
  if (UNSTORABLE_ESCAPE_RE.test(text)) meta.bodyHasNul = true
  meta.bodyText = text
}

const tooLarge = () => new AppError('payload_too_large', `Request body is larger than ${MAX_JSON_BODY_BYTES} bytes`)

/**
 * The body's bytes, refused with 413 as soon as more than `max` have arrived. A declared
 * Content-Length was checked against `max` already and bounds what Bun reads, so one buffer read
 * is safe there; a chunked body is counted chunk by chunk and the stream cancelled at `max` + 1
 * bytes, so an endless upload never sits in memory.
 */
export async function readBodyAtMost(request: Request, max: number): Promise<Uint8Array> {
  if (request.headers.get('content-length') !== null) {
    const bytes = new Uint8Array(await request.arrayBuffer())
    if (bytes.byteLength > max) throw tooLarge()
    return bytes
  }
  const reader = request.body?.getReader()
  if (!reader) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > max) {
      await reader.cancel().catch(() => {})
      throw tooLarge()
    }
    chunks.push(value)
  }
  if (chunks.length === 1) return chunks[0]
  const out = new Uint8Array(total)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}

/**
 * A JSON object may carry `toString`/`valueOf` keys holding data; such an object cannot be
 * converted to a string, and Elysia's validation error does exactly that for a rejected value
 * (a 500 instead of the 422, found by the fuzz tests). A hidden Symbol.toPrimitive keeps it
 * convertible without changing its keys or JSON form. Only bodies naming those keys pay for the reviver.
 */
const PRIMITIVE_KEY_RE = /"(?:toString|valueOf)"\s*:/
function keepConvertible(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && (Object.hasOwn(value, 'toString') || Object.hasOwn(value, 'valueOf'))) {
    Object.defineProperty(value, Symbol.toPrimitive, { value: () => '[object Object]', enumerable: false })
  }
  return value
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

/** Bracket depth outside strings, stopping as soon as it passes `max` (one pass, no allocation). */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > max) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
}

const UNSTORABLE_ESCAPE_RE = /\\u(?:0000|[dD][89a-fA-F])/
/** NUL, or a UTF-16 surrogate without its pair: text PostgreSQL refuses, so a 422 and not a 500. */
const unstorable = (s: string): boolean => s.includes('\u0000') || !s.isWellFormed()
const containsNul = (v: unknown): boolean => (typeof v === 'string' ? unstorable(v) : Array.isArray(v) ? v.some(containsNul) : false)
const nulError = (loc: (string | number)[]): FieldError => ({ loc, msg: 'Must not contain the NUL character (U+0000) or an unpaired surrogate', type: 'invalid' })

function findNul(value: unknown, at: (string | number)[], out: FieldError[]): void {
  if (out.length >= 20) return
  if (typeof value === 'string') {
    if (unstorable(value)) out.push(nulError(at))
  } else if (Array.isArray(value)) value.forEach((v, i) => findNul(v, [...at, i], out))
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (unstorable(k)) out.push(nulError(at))
      findNul(v, [...at, k], out)
    }
  }
}

/** Checks size and type of a body from its headers; true when there is a JSON body to inspect. */
function checkJsonBody(request: Request): boolean {
  if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'DELETE' || request.method === 'OPTIONS') return false
  const length = request.headers.get('content-length')
  if (length !== null && Number(length) > MAX_JSON_BODY_BYTES) throw tooLarge()
  const hasBody = length !== null ? Number(length) > 0 : request.headers.has('transfer-encoding') || request.body !== null
  if (!hasBody) return false
  const type = request.headers.get('content-type')
  if (type === null || !JSON_TYPE_RE.test(type)) {
    throw new AppError('validation', 'Content-Type must be application/json', {
      errors: [{ loc: ['header', 'content-type'], msg: 'Content-Type must be application/json', type: 'content_type' }],
    })
  }
  return true
}

type RawInputs = { path?: Record<string, unknown>; query?: Record<string, unknown> }

function toProblem(error: unknown, code: string | number, request: Request, requestId: string, deps: Pick<AppDeps, 'logger'>, raw: RawInputs = {}): { status: number; body: unknown; headers?: Record<string, string> } {
  if (error instanceof AppError) {
    const extra: Record<string, unknown> = { ...error.extra }
    if (error.errors) extra.errors = error.errors
    return { status: error.status, body: problemBody(error.code, error.detail, requestId, extra) }
  }
  if (error instanceof ValidationError) {
    const errors = validationErrors(error, raw)
    const detail = errors.length === 1 ? `${errors[0].loc.join('.')}: ${errors[0].msg}` : `${errors.length} invalid fields: ${errors.map((e) => e.loc.join('.')).join(', ')}`
    return { status: 422, body: problemBody('validation', detail, requestId, { errors }) }
  }
  if (code === 'PARSE') {
    return { status: 422, body: problemBody('validation', 'Malformed JSON body', requestId, { errors: [{ loc: ['body'], msg: 'Malformed JSON body', type: 'json_invalid' }] }) }
  }
  if (code === 'NOT_FOUND') {
    return { status: 404, body: problemBody('not_found', `No route for ${request.method} ${pathOf(request.url)}`, requestId) }
  }
  if (isUnavailableError(error)) {
    deps.logger.warn('dependency unavailable', { request_id: requestId, ...unavailableCause(error) })
    return { status: 503, body: problemBody('unavailable', 'A backing service is temporarily unavailable; retry shortly', requestId), headers: { 'retry-after': '2' } }
  }
  deps.logger.error('unhandled error', { request_id: requestId, error })
  return { status: 500, body: problemBody('internal', 'Unexpected server error', requestId) }
}

function locateRawValue(value: unknown, raw: RawInputs): (string | number)[] | undefined {
  // Only scalars can have come from a path or query string; an object from a body may even
  // carry a `toString` that is not a function.
  if (value !== null && typeof value === 'object') return undefined
  for (const [where, values] of [['path', raw.path], ['query', raw.query]] as const) {
    for (const [name, v] of Object.entries(values ?? {})) if (v === value || String(v) === String(value) || (typeof value === 'number' && Number(v) === value)) return [where, name]
  }
  return undefined
}

function firstMessage(error: ValidationError): string | undefined {
  try {
    return (error.all as { message: string }[])?.[0]?.message
  } catch {
    return undefined
  }
}

const LOCATION: Record<string, string> = { body: 'body', query: 'query', params: 'path', headers: 'header', cookie: 'cookie' }

/** TypeBox errors → contract §6 `errors[]`, one per field, with readable messages. */
export function validationErrors(error: ValidationError, raw: RawInputs = {}): FieldError[] {
  // Elysia's string→number step of path and query numbers reports a violation as type
  // "property" without the parameter's name; the raw value tells which parameter it was.
  if (error.type === 'property') {
    const loc = locateRawValue(error.value, raw)
    if (loc) return [{ loc, msg: describe({ message: error.message, schema: (error.validator as { schema?: Record<string, unknown> })?.schema ?? {}, value: error.value, first: firstMessage(error) }), type: 'invalid' }]
  }
  const where = LOCATION[error.type] ?? error.type
  const seen = new Set<string>()
  const out: FieldError[] = []
  let all: { path: string; message: string; schema: Record<string, unknown>; value: unknown }[] = []
  try {
    all = (error.all as typeof all) ?? []
  } catch {
    all = []
  }
  for (const e of all) {
    const loc: (string | number)[] = [where, ...e.path.split('/').filter(Boolean).map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~')))]
    const key = loc.join('\u0000')
    if (seen.has(key)) continue
    seen.add(key)
    out.push({ loc, msg: describe(e), type: e.message === 'Unexpected property' ? 'extra_forbidden' : e.value === undefined ? 'missing' : 'invalid' })
  }
  if (out.length === 0) out.push({ loc: [where], msg: 'Invalid value', type: 'invalid' })
  return out
}

function describe(e: { message: string; schema: Record<string, unknown>; value: unknown; first?: string }): string {
  if (e.first) return e.first
  if (e.message === 'Unexpected property') return 'Unknown field'
  if (e.value === undefined && /Expected required property/.test(e.message)) return 'Field required'
  const branches = e.schema.anyOf as Record<string, unknown>[] | undefined
  if (branches) {
    const consts = branches.filter((b) => 'const' in b).map((b) => JSON.stringify(b.const))
    if (consts.length === branches.length) return `Expected one of ${consts.join(', ')}`
    const types = [...new Set(branches.map((b) => (b.format === 'integer' ? 'integer' : (b.type as string))).filter(Boolean))]
    if (types.length) return `Expected ${types.join(' or ')}`
  }
  if (e.schema.enum) return `Expected one of ${(e.schema.enum as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
  return e.message
}
