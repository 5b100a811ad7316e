/**
 * Cross-cutting HTTP behaviour for every response, errors included (contract §6): request id,
 * `Cache-Control: no-store`, `X-Content-Type-Options: nosniff` (§15), authentication before
 * anything else, the JSON body rules (api/request-body.ts), problem+json errors
 * (api/problems.ts), JSON answers with plain numbers, one JSON log line and the metrics per
 * request. Only Elysia's public lifecycle hooks are used here; the few reads of its
 * objects beyond them live in api/elysia-adapter.ts.
 */
import { Elysia } from 'elysia'
import { randomUUID } from 'node:crypto'
import { AppError, type FieldError } from '../../shared/platform/errors'
import type { AppDeps } from '../deps'
import { matchedRoute } from '../elysia-adapter'
import { validationDetail } from '../../shared/platform/validation'
import { problemResponse, toProblem } from '../problems'
import { recordRefusal } from '../../shared/platform/idempotency'
import { metaByRequest, type RequestMeta } from '../request-meta'
import { isRefusedPath } from '../raw-path'
import { checkJsonBody, containsNul, findNul, inspectJsonBody, nulError, parseJsonBody } from '../request-body'
import { plainJson } from '../../shared/platform/plain-json'

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/

/** `routeOf` names the route of a request refused before routing (createApp passes its own router's). */
export function httpPlugin(deps: Pick<AppDeps, 'logger' | 'metrics' | 'keys'>, routeOf: (method: string, path: string) => string | undefined = () => undefined) {
  return new Elysia({ name: 'http' })
    .onRequest(async ({ request, set }) => {
      const incoming = request.headers.get('x-request-id')
      const id = incoming && REQUEST_ID_RE.test(incoming) ? incoming : randomUUID()
      const meta: RequestMeta = { id, start: performance.now(), api: isApiPath(pathOf(request.url)) }
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
      if (meta.bodyText === undefined) return
      return parseJsonBody(meta.bodyText)
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
    .mapResponse({ as: 'global' }, ({ responseValue, set }) => {
      if (!isPlainJson(responseValue)) return
      const headers = { ...(set.headers as Record<string, string>) }
      headers['content-type'] ??= 'application/json'
      return new Response(plainJson(responseValue), { status: typeof set.status === 'number' ? set.status : 200, headers })
    })
    .onError({ as: 'global' }, async ({ request, error, code, params, query }) => {
      const meta: RequestMeta = metaByRequest.get(request) ?? { id: randomUUID(), start: performance.now(), api: isApiPath(pathOf(request.url)) }
      metaByRequest.set(request, meta)
      const { status, body, headers } = toProblem(error, code, { method: request.method, path: pathOf(request.url) }, meta.id, deps.logger, { path: params, query })
      meta.status = status
      const text = typeof body === 'string' ? body : plainJson(body)
      // A refusal of an idempotent request is its key's answer: stored as exactly this text, so
      // a replay is the same bytes (shared/platform/idempotency.ts). No-op for other errors.
      await recordRefusal(error, status, text)
      return problemResponse(status, text, meta.id, headers)
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
}

/** A value Elysia would write as JSON: a plain object or an array. */
function isPlainJson(value: unknown): value is object {
  if (value === null || typeof value !== 'object') return false
  const proto = Object.getPrototypeOf(value)
  return Array.isArray(value) || proto === Object.prototype || proto === null
}

/** `/v1` itself and everything under it needs a key, routes or not (401 before 404). */
const isApiPath = (path: string): boolean => path === '/v1' || path.startsWith('/v1/')

function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const q = url.indexOf('?', start)
  return q === -1 ? url.slice(start) : url.slice(start, q)
}
