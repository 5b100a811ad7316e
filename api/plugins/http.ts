/**
 * Cross-cutting HTTP behaviour for every response, errors included (contract §6): request id,
 * `Cache-Control: no-store`, `X-Content-Type-Options: nosniff` (§15), authentication before
 * anything else, the JSON body rules (api/request-body.ts), problem+json errors
 * (api/problems.ts), JSON answers with plain numbers, one JSON log line and the metrics per
 * request; and for the operations pages call (contract §16), form bodies, and for publishable
 * keys the origin rule, CORS and the rate limits (api/browser-access.ts, api/rate-limits.ts). A
 * secret key's request meets that part as one branch on its kind. Only Elysia's public lifecycle
 * hooks are used here; the few reads of its objects beyond them live in api/elysia-adapter.ts.
 */
import { Elysia } from 'elysia'
import { randomUUID } from 'node:crypto'
import { AppError, type FieldError } from '../../shared/platform/errors'
import type { AppDeps } from '../deps'
import { matchedRoute, textAnswer } from '../elysia-adapter'
import { validationDetail } from '../../shared/platform/validation'
import { problemResponse, toProblem } from '../problems'
import { ClaimedRefusal } from '../../shared/platform/idempotency'
import { metaByRequest, type RequestMeta } from '../request-meta'
import { isRefusedPath } from '../raw-path'
import { plainJson } from '../../shared/platform/plain-json'
import { checkBody, containsNul, findNul, inspectJsonBody, isFormPost, nulError, parseJsonBody, readFormBody } from '../request-body'
import { readKeyHeader, type AuthContext, type BrowserAccess } from '../../shared/access/key-store'
import { formErrors, formToBody } from '../../shared/platform/form-body'
import {
  FORM_BODIES,
  withCors,
  isBrowserPath,
  originAllowed,
  originRefused,
  redirectTarget,
  refusalLocation,
  splitForm,
  type FormBody,
} from '../browser-access'
import { clientAddress } from '../client-address'
import type { LimitOutcome } from '../rate-limits'

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/

/** `routeOf` names the route of a request refused before routing (createApp passes its own router's). */
export function httpPlugin(
  deps: Pick<AppDeps, 'logger' | 'metrics' | 'keys' | 'rateLimits' | 'peerAddress' | 'config'>,
  routeOf: (method: string, path: string) => string | undefined = () => undefined,
) {
  /**
   * A publishable key's request (§16.2, §16.4): on a page's operation its `Origin` must be one of
   * the key's origins (nothing is counted for a refused one); then both limits are counted. The
   * answer carries the CORS fields (pages' operations) and the rate-limit fields, errors included.
   * Synchronous when the limits are decided from memory (rate-limits.ts): a promise only when
   * Redis is asked.
   */
  function admitBrowser(
    request: Request,
    set: { headers: Record<string, string | number> },
    meta: RequestMeta,
    auth: AuthContext,
    access: BrowserAccess,
    path: string,
  ): undefined | Promise<void> {
    const address = clientAddress(request.headers.get('x-forwarded-for'), () => deps.peerAddress(request), deps.config.trustProxyHops)
    let origin: string | undefined
    if (isBrowserPath(path)) {
      const sent = request.headers.get('origin')
      if (!originAllowed(access, sent)) return refuseOrigin(meta, auth, access, address, sent)
      origin = sent
    }
    const outcome = deps.rateLimits.consume(auth.keyId, access, address)
    if (outcome instanceof Promise) return outcome.then((settled) => answerLimits(set, meta, access, settled, origin))
    answerLimits(set, meta, access, outcome, origin)
  }

  async function refuseOrigin(meta: RequestMeta, auth: AuthContext, access: BrowserAccess, address: string, sent: string | null): Promise<never> {
    deps.metrics.access.originRefusals++
    meta.headers = await deps.rateLimits.peek(auth.keyId, access, address)
    throw originRefused(sent)
  }

  function answerLimits(
    set: { headers: Record<string, string | number> },
    meta: RequestMeta,
    access: BrowserAccess,
    outcome: LimitOutcome,
    origin: string | undefined,
  ): void {
    const headers = origin ? withCors(outcome.headers, origin) : outcome.headers
    meta.headers = headers
    if (outcome.exceeded) {
      deps.metrics.access.rateLimited[outcome.exceeded]++
      headers['retry-after'] = String(outcome.retryAfter)
      const which = outcome.exceeded === 'per-ip' ? `${access.ratePerIp.text} per client address` : `${access.rate.text} for this key`
      throw new AppError('rate_limited', `Too many requests: this publishable key allows ${which}; retry after ${outcome.retryAfter} s`)
    }
    for (const name in headers) set.headers[name] = headers[name]
  }

  /**
   * Authentication is route-independent and reads headers only, so it runs first: a bad key is a
   * 401 whatever else is wrong with the request, and no byte of an anonymous body is ever read —
   * except a form post to a page's operation, whose key may be in a field (§16.3): its body is
   * read first, under the same limits, and returned. Scopes are checked per route
   * (plugins/auth.ts). A publishable key is then admitted (origin, limits) by admitBrowser.
   */
  async function authenticate(
    request: Request,
    set: { headers: Record<string, string | number> },
    meta: RequestMeta,
    path: string,
  ): Promise<FormBody | undefined> {
    const headerKey = readKeyHeader(request.headers)
    let form: FormBody | undefined
    if (headerKey === null && isFormPost(request) && isBrowserPath(path)) {
      checkBody(request, path, isBrowserPath)
      form = splitForm(await readFormBody(request, meta))
      if (form.apiKey === undefined) throw new AppError('unauthorized', 'Missing API key: send it in the api_key field of the form, or in the X-Api-Key header')
      meta.auth = await deps.keys.authenticateFormKey(form.apiKey)
    } else {
      if (headerKey === null) throw new AppError('unauthorized', 'Missing API key: send it in the X-Api-Key header')
      meta.auth = await deps.keys.authenticateKey(headerKey)
    }
    // A refusal of the origin or the limits is answered at `_redirect` when it is a good one.
    let redirectRefusal: unknown
    if (form?.redirect !== undefined) {
      try {
        meta.redirect = redirectTarget(meta.auth.browser, form.redirect)
      } catch (error) {
        redirectRefusal = error
      }
    }
    if (meta.auth.browser) {
      const admitting = admitBrowser(request, set, meta, meta.auth, meta.auth.browser, path)
      if (admitting) await admitting
    }
    if (redirectRefusal) throw redirectRefusal
    return form
  }

  return (
    new Elysia({ name: 'http' })
      .onRequest(async ({ request, set }) => {
        const incoming = request.headers.get('x-request-id')
        const id = incoming && REQUEST_ID_RE.test(incoming) ? incoming : randomUUID()
        const path = pathOf(request.url)
        const meta: RequestMeta = { id, start: performance.now(), api: isApiPath(path), path }
        metaByRequest.set(request, meta)
        set.headers['x-request-id'] = id
        set.headers['cache-control'] = 'no-store'
        // contract §15 §6: no browser guesses a type other than the one sent (a JSON answer or a
        // public copy read as HTML would run script that a description's author put there).
        set.headers['x-content-type-options'] = 'nosniff'
        // Before the key and any route: the path as resolved may name the parent resource (§6).
        if (isRefusedPath(request)) {
          meta.refusedPath = true
          throw new AppError('not_found', 'No resource at this path: a `.` or `..` segment, plain or percent-encoded, is never resolved')
        }
        if (!meta.api) return
        // A CORS preflight carries no key (§16.2): its route answers it.
        if (request.method === 'OPTIONS' && isBrowserPath(path)) return
        const form = await authenticate(request, set, meta, path)
        await readBody(request, meta, path, form)
      })
      // The body was read once by inspectJsonBody (the stream is consumed); parse that text.
      // Outside /v1 the only body is the local storage PUT, which streams the raw request itself
      // (a route's `parse: 'none'` no longer applies once a global parse hook exists).
      .onParse({ as: 'global' }, ({ request }) => {
        const meta = metaByRequest.get(request)
        if (!meta?.api) return null
        // A form's fields become the JSON body, read by the route's own schema (§16.3).
        if (meta.form) return formToBody(meta.form.fields, FORM_BODIES[meta.path ?? ''])
        if (meta.bodyText === undefined) return
        const body = parseJsonBody(meta.bodyText)
        if (meta.auth?.browser) takeHoneypot(body, meta)
        return body
      })
      // After authentication, scope and schema validation, so 401, 403 and the schema's 422 keep
      // their precedence; before any handler reaches the database.
      .onBeforeHandle({ as: 'global' }, ({ request, query, body }) => {
        const meta = metaByRequest.get(request)
        if (!meta?.api) return
        const errors: FieldError[] = []
        if (request.url.includes('%00')) {
          for (const [name, value] of Object.entries(query ?? {})) if (containsNul(value)) errors.push(nulError(['query', name]))
        }
        if (meta.bodyHasNul) findNul(body, ['body'], errors)
        if (errors.length) throw new AppError('validation', validationDetail(errors), { errors })
      })
      // A handler's object or array is written here rather than by Elysia, with numbers in plain
      // decimals (contract §15: never `1e-7`); answers already made (Response, text) pass as they are.
      // Handed back as text, not a Response (elysia-adapter.ts textAnswer says why).
      .mapResponse({ as: 'global' }, ({ responseValue, set }) => {
        if (!isPlainJson(responseValue)) return
        set.headers['content-type'] ??= 'application/json'
        return textAnswer(plainJson(responseValue))
      })
      .onError({ as: 'global' }, async ({ request, error, code, params, query }) => {
        const meta: RequestMeta = metaByRequest.get(request) ?? { id: randomUUID(), start: performance.now(), api: isApiPath(pathOf(request.url)) }
        metaByRequest.set(request, meta)
        const { status, body, headers } = toProblem(error, code, { method: request.method, path: pathOf(request.url) }, meta.id, deps.logger, {
          path: params,
          query,
        })
        // A form's errors name its fields as it spelt them (§16.3).
        if (meta.form && body && typeof body === 'object' && Array.isArray((body as { errors?: unknown }).errors)) {
          const problem = body as { errors: FieldError[]; detail: string }
          problem.errors = formErrors(problem.errors)
          if (problem.errors.length === 1 || status === 422) problem.detail = validationDetail(problem.errors)
        }
        const text = typeof body === 'string' ? body : plainJson(body)
        // A refusal of an idempotent request is its key's answer: stored as exactly this text, so
        // a replay is the same bytes (shared/platform/idempotency.ts).
        if (error instanceof ClaimedRefusal) await error.storeAnswer(status, text)
        const extra = meta.headers ? { ...meta.headers, ...headers } : headers
        // A plain form is sent back to its page, the refusal named in the query (§16.3).
        if (meta.redirect && status >= 400 && status < 500) {
          meta.status = 303
          return new Response(null, {
            status: 303,
            headers: {
              location: refusalLocation(meta.redirect, typeof body === 'string' ? JSON.parse(body) : (body as object)),
              'cache-control': 'no-store',
              'x-content-type-options': 'nosniff',
              'x-request-id': meta.id,
              ...extra,
            },
          })
        }
        meta.status = status
        return problemResponse(status, text, meta.id, extra)
      })
      .onAfterResponse({ as: 'global' }, (ctx) => {
        const { request, set } = ctx
        const meta = metaByRequest.get(request)
        if (!meta) return
        const status = meta.status ?? (typeof set.status === 'number' ? set.status : 200)
        const ms = performance.now() - meta.start
        // A refused path's resolved form names another route: it is labelled as matching none.
        const route = meta.refusedPath ? 'unmatched' : (matchedRoute(ctx) ?? routeOf(request.method, pathOf(request.url)) ?? 'unmatched')
        deps.metrics.observeRequest(request.method, route, status, ms / 1000)
        if (meta.auth) {
          deps.metrics.access.requests[meta.auth.kind]++
          if (meta.honeypotAnswered) deps.metrics.access.honeypotHits++
        }
        // A 5xx is ours to look at; a 4xx is the client's (an alert on error lines stays meaningful).
        deps.logger[status >= 500 ? 'error' : 'info']('request', {
          request_id: meta.id,
          method: request.method,
          route,
          status,
          latency_ms: Math.round(ms * 100) / 100,
          key_id: meta.auth?.keyId,
          business_id: meta.auth?.business.id,
        })
      })
  )
}

/**
 * The body of an authenticated request, within its limits (api/request-body.ts): a JSON body's
 * text kept for onParse, a form's fields split from its `api_key`, `_redirect` and `_gotcha`.
 * `form` is the form authentication already read, if any.
 */
async function readBody(request: Request, meta: RequestMeta, path: string, form: FormBody | undefined): Promise<void> {
  if (!form) {
    const kind = checkBody(request, path, isBrowserPath)
    if (kind === 'json') await inspectJsonBody(request, meta)
    else if (kind === 'form') {
      form = splitForm(await readFormBody(request, meta))
      if (form.apiKey !== undefined) throw new AppError('unauthorized', 'Send the API key once: in the X-Api-Key header or in the api_key field, not both')
      if (form.redirect !== undefined) meta.redirect = redirectTarget(meta.auth?.browser, form.redirect)
    }
  }
  if (form) {
    meta.form = form
    meta.honeypot = form.gotcha
  }
}

/** A value Elysia would write as JSON: a plain object or an array. */
function isPlainJson(value: unknown): value is object {
  if (value === null || typeof value !== 'object') return false
  const proto = Object.getPrototypeOf(value)
  return Array.isArray(value) || proto === Object.prototype || proto === null
}

/** `_gotcha` of a publishable key's JSON body (§16.4): taken out before validation, remembered when filled in. */
function takeHoneypot(body: unknown, meta: RequestMeta): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !Object.hasOwn(body, '_gotcha')) return
  const value = (body as Record<string, unknown>)._gotcha
  meta.honeypot = value !== null && value !== undefined && value !== '' && value !== false
  delete (body as Record<string, unknown>)._gotcha
}

/** `/v1` itself and everything under it needs a key, routes or not (401 before 404). */
const isApiPath = (path: string): boolean => path === '/v1' || path.startsWith('/v1/')

function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const q = url.indexOf('?', start)
  return q === -1 ? url.slice(start) : url.slice(start, q)
}
