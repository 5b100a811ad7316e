/**
 * The JSON request body under /v1 (contract §6), read once before Elysia parses it: its size
 * (1 MiB, counted as it arrives), content type, UTF-8, depth, and the characters PostgreSQL
 * cannot store. Nothing here runs before the API key has been authenticated, except for a form
 * post that carries its key in a field (contract §16.3), whose body is read under the same rules
 * first. Form bodies (the two operations pages call) get the same limits.
 */
import { ParseError } from 'elysia'
import { AppError, type FieldError } from '../shared/platform/errors'
import { parseFormPairs, type FormPair } from '../shared/platform/form-body'
import type { RequestMeta } from './request-meta'

/** api-spec/contract §6: larger JSON bodies are refused with 413. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024

/**
 * Deeper JSON is refused before validation: validating (and describing the errors of) very deep
 * values costs time quadratic in the depth, so a 40 KB body of nested brackets would hold a core
 * for seconds. Real bodies nest under 10 levels.
 */
export const MAX_JSON_DEPTH = 64

const JSON_TYPE_RE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i
const FORM_TYPE_RE = /^application\/x-www-form-urlencoded\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i

/**
 * Reads the JSON body once, before Elysia parses it: enforces the 1 MiB limit on the bytes
 * actually sent (a chunked request has no Content-Length to check up front), and refuses invalid
 * UTF-8 and bodies nested deeper than MAX_JSON_DEPTH with a 422 naming the body. The text is
 * kept for the parse hook; reading a clone instead halved the ingest throughput (a teed stream
 * per request).
 */
export async function inspectJsonBody(request: Request, meta: RequestMeta): Promise<void> {
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
      if (c === 92)
        i++ // backslash: skip the escaped character
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
export const containsNul = (v: unknown): boolean => (typeof v === 'string' ? unstorable(v) : Array.isArray(v) ? v.some(containsNul) : false)
export const nulError = (loc: (string | number)[]): FieldError => ({
  loc,
  msg: 'Must not contain the NUL character (U+0000) or an unpaired surrogate',
  type: 'invalid',
})

export function findNul(value: unknown, at: (string | number)[], out: FieldError[]): void {
  if (out.length >= 20) return
  if (typeof value === 'string') {
    if (unstorable(value)) out.push(nulError(at))
  } else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) findNul(v, [...at, i], out)
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (unstorable(k)) out.push(nulError(at))
      findNul(v, [...at, k], out)
    }
  }
}

export type BodyKind = 'json' | 'form'

/**
 * Checks size and type of a body from its headers: the kind of body there is to read, or null
 * for none. `formAllowed(path)`: the path takes form bodies too (contract §16.3), asked only when
 * the type is not JSON, so a JSON request pays nothing for it.
 */
export function checkBody(request: Request, path: string, formAllowed: (path: string) => boolean): BodyKind | null {
  if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'DELETE' || request.method === 'OPTIONS') return null
  const length = request.headers.get('content-length')
  if (length !== null && Number(length) > MAX_JSON_BODY_BYTES) throw tooLarge()
  const hasBody = length !== null ? Number(length) > 0 : request.headers.has('transfer-encoding') || request.body !== null
  if (!hasBody) return null
  const type = request.headers.get('content-type')
  if (type !== null && JSON_TYPE_RE.test(type)) return 'json'
  const form = formAllowed(path)
  if (form && type !== null && FORM_TYPE_RE.test(type)) return 'form'
  const msg = form ? 'Content-Type must be application/json or application/x-www-form-urlencoded (UTF-8)' : 'Content-Type must be application/json'
  throw new AppError('validation', msg, { errors: [{ loc: ['header', 'content-type'], msg, type: 'content_type' }] })
}

/** True for a form body by its headers alone (before the key is known: it may be in a field). */
export const isFormPost = (request: Request): boolean => request.method === 'POST' && FORM_TYPE_RE.test(request.headers.get('content-type') ?? '')

/** A form body's fields, read under the same rules as a JSON body (1 MiB counted as it arrives, UTF-8, NUL). */
export async function readFormBody(request: Request, meta: RequestMeta): Promise<FormPair[]> {
  const bytes = await readBodyAtMost(request, MAX_JSON_BODY_BYTES)
  let text: string
  try {
    text = UTF8.decode(bytes)
  } catch {
    const msg = 'Request body is not valid UTF-8'
    throw new AppError('validation', msg, { errors: [{ loc: ['body'], msg, type: 'form_invalid' }] })
  }
  const pairs = parseFormPairs(text)
  if (pairs.some(([name, value]) => unstorable(name) || unstorable(value))) meta.bodyHasNul = true
  return pairs
}

/** The body text read by inspectJsonBody as a value; malformed JSON is Elysia's ParseError (a 422). */
export function parseJsonBody(text: string): unknown {
  try {
    return PRIMITIVE_KEY_RE.test(text) ? JSON.parse(text, keepConvertible) : JSON.parse(text)
  } catch (error) {
    throw new ParseError(error as Error)
  }
}
