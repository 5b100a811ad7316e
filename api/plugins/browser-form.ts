/**
 * `browserForm` macro, for the operations pages call (contract §16.3, §16.4): the honeypot's
 * answer (`_gotcha` filled in: answered as the route accepts a request, nothing stored) and a
 * plain form's `_redirect` (a success is a 303 to it). The http plugin has read the form and
 * checked `_redirect` against the key's origins; only these two routes pay for the hooks.
 * `preflightRoute` answers their CORS preflight (§16.2).
 */
import { Elysia } from 'elysia'
import type { AuthContext } from '../../shared/access/key-store'
import { preflightHeaders } from '../browser-access'
import { requestMeta } from '../request-meta'

export const browserFormPlugin = new Elysia({ name: 'browser-form' }).macro({
  // `body: never` accepts an answer typed for its route's body (the route's schema validated it).
  browserForm: (accepted: (auth: AuthContext, body: never) => unknown) => ({
    beforeHandle(ctx: { request: Request }) {
      const meta = requestMeta(ctx.request)
      if (!meta?.honeypot || !meta.auth) return
      meta.honeypotAnswered = true
      // The validated body (typed by the route, not by this hook: a typed parameter here would override
      // the route's). Typed `never`: Elysia would otherwise add this hook's answer to the route's
      // response types, which the route's own schema already describes.
      return accepted(meta.auth, (ctx as { body?: unknown }).body as never) as never
    },
    afterHandle({ request }: { request: Request }) {
      const redirect = requestMeta(request)?.redirect
      if (redirect) return new Response(null, { status: 303, headers: { location: redirect.href } }) as never
    },
  }),
})

/** 204 with the preflight fields; the request that follows is the one checked. */
export function preflightRoute({ request, set }: { request: Request; set: { status?: number | string; headers: Record<string, string | number> } }) {
  Object.assign(set.headers, preflightHeaders(request.headers.get('origin')))
  set.status = 204
  return ''
}

export const PREFLIGHT_DETAIL = {
  summary: 'CORS preflight (no key)',
  description:
    'What a browser asks before a page’s script sends the request (contract §16.2). ' +
    'No key, whatever the origin: 204 with `Access-Control-Allow-Origin: <Origin>`, ' +
    '`Access-Control-Allow-Methods: POST`, `Access-Control-Allow-Headers: Content-Type, ' +
    'X-Api-Key, Idempotency-Key`, `Access-Control-Max-Age: 600` and `Vary: Origin`. ' +
    'The request itself is then taken only with a publishable key from one of its origins.',
  tags: ['Leads'],
}
