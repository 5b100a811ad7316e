/**
 * What pages get from the two operations they call (contract §16): the CORS fields, the origin
 * rule for publishable keys, the form bodies each operation's own schema reads, and the `_redirect`
 * answers of a plain HTML form. Secret keys never reach this module's checks (api/plugins/http.ts
 * branches on the key's kind once).
 */
import type { TSchema } from '@sinclair/typebox'
import { BROWSER_PATHS } from '../shared/access/operations'
import type { BrowserAccess } from '../shared/access/key-store'
import { AppError } from '../shared/platform/errors'
import type { FormPair } from '../shared/platform/form-body'
import { LeadInquiryRequest, RentalIngestRequest } from '../shared/leads/schemas'

/** The body schema a form is read with: the very schema that validates the route's JSON body. */
export const FORM_BODIES: Record<string, TSchema> = {
  '/v1/leads/ingest': RentalIngestRequest,
  '/v1/leads/inquiries': LeadInquiryRequest,
}

export const isBrowserPath = (path: string): boolean => BROWSER_PATHS.has(path)

/** §16.2: the headers a page's script may send and the answer fields it may read. */
export const ALLOW_HEADERS = 'Content-Type, X-Api-Key, Idempotency-Key'
export const EXPOSE_HEADERS = 'X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed'
export const PREFLIGHT_MAX_AGE = '600'

/** A preflight carries no key, so every origin gets the same answer; the request itself is checked. */
export function preflightHeaders(origin: string | null): Record<string, string> {
  return {
    ...(origin ? { 'access-control-allow-origin': origin } : {}),
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': ALLOW_HEADERS,
    'access-control-max-age': PREFLIGHT_MAX_AGE,
    vary: 'Origin',
  }
}

/** The CORS fields of an answer to a page's request (§16.2), added to `headers` (a fresh object per answer). */
export function withCors(headers: Record<string, string>, origin: string): Record<string, string> {
  headers['access-control-allow-origin'] = origin
  headers.vary = 'Origin'
  headers['access-control-expose-headers'] = EXPOSE_HEADERS
  return headers
}

/** Exact comparison (scheme, host, port) with the stored canonical origins: what browsers send is already canonical. */
export function originAllowed(access: BrowserAccess, origin: string | null): origin is string {
  return origin !== null && access.origins.includes(origin)
}

export function originRefused(origin: string | null): AppError {
  return new AppError(
    'origin_not_allowed',
    origin === null
      ? 'A publishable key is taken only from the pages of its origins, and this request has no Origin header'
      : `A publishable key is taken only from the pages of its origins, and ${origin} ` +
          `is not one of them (bun run cli key origins <key_id> --set ... changes them)`,
  )
}

/** The reserved fields of a form body, taken out before its fields become the JSON body. */
export interface FormBody {
  fields: FormPair[]
  apiKey?: string
  redirect?: string
  /** `_gotcha` was filled in (the honeypot, §16.4). */
  gotcha: boolean
}

const RESERVED = new Set(['api_key', '_redirect', '_gotcha'])

export function splitForm(pairs: FormPair[]): FormBody {
  const form: FormBody = { fields: [], gotcha: false }
  for (const pair of pairs) {
    const [name, value] = pair
    if (!RESERVED.has(name)) form.fields.push(pair)
    else if (name === 'api_key') form.apiKey = value
    else if (name === '_redirect') form.redirect = value
    else if (value !== '') form.gotcha = true
  }
  return form
}

const MAX_REDIRECT = 2000

/** §16.3: `_redirect` is an absolute URL on one of the key's origins (a secret key has none), else a 422 on it. */
export function redirectTarget(access: BrowserAccess | undefined, raw: string): URL {
  const refuse = (msg: string) =>
    new AppError('validation', `body._redirect: ${msg}`, { errors: [{ loc: ['body', '_redirect'], msg, type: 'redirect_not_allowed' }] })
  if (raw.length > MAX_REDIRECT || !URL.canParse(raw)) throw refuse(`Must be an absolute URL of at most ${MAX_REDIRECT} characters`)
  const url = new URL(raw)
  if (!access) throw refuse('Only a publishable key redirects: a secret key has no origins')
  if (!access.origins.includes(url.origin)) throw refuse(`Must be on one of the key's origins (${access.origins.join(', ')})`)
  return url
}

/**
 * §16.3 refusal: `error=<the problem type's last segment>` and, for a 422, `field=<the first
 * field>` added to the `_redirect` URL's query (its fragment kept).
 */
export function refusalLocation(redirect: URL, problem: { type?: unknown; status?: unknown; errors?: unknown }): string {
  const url = new URL(redirect)
  url.searchParams.set(
    'error',
    String(problem.type ?? '')
      .split(':')
      .pop() || 'error',
  )
  const first = Array.isArray(problem.errors) ? (problem.errors[0] as { loc?: unknown[] } | undefined) : undefined
  if (problem.status === 422 && Array.isArray(first?.loc)) {
    const field = first.loc
      .slice(1)
      .filter((p) => typeof p === 'string')
      .join('.')
    if (field) url.searchParams.set('field', field)
  }
  return url.href
}
