/**
 * What the HTTP tier learns about a request before routing (api/plugins/http.ts): its id, its
 * authenticated key, its JSON body text. Kept beside the request, not in it, and read by the
 * auth plugin and the error and log hooks.
 */
import type { AuthContext } from '../shared/access/key-store'
import type { FormBody } from './browser-access'

export interface RequestMeta {
  id: string
  start: number
  /** Under `/v1/`: authenticated, JSON bodies read and checked here. */
  api: boolean
  auth?: AuthContext
  status?: number
  /** The JSON body escapes a NUL or a lone surrogate somewhere (PostgreSQL text and jsonb cannot store them). */
  bodyHasNul?: boolean
  /** Refused before routing for a dot segment in its path (api/raw-path.ts). */
  refusedPath?: boolean
  /** The JSON body as text, read once here; the parse hook hands Elysia its value. */
  bodyText?: string
  /** The request path (without the query). */
  path?: string
  /** A form body (contract §16.3): its fields, made into the JSON body by the parse hook. */
  form?: FormBody
  /** A form's `_redirect`, checked against the key's origins: success and refusals answer 303 to it. */
  redirect?: URL
  /** `_gotcha` was filled in: answered as accepted, nothing stored (contract §16.4). */
  honeypot?: boolean
  /** The route answered the honeypot (counted in /metrics). */
  honeypotAnswered?: boolean
  /** Fields every answer to this request carries, errors included: CORS and the rate-limit fields of a publishable key. */
  headers?: Record<string, string>
}

export const metaByRequest = new WeakMap<Request, RequestMeta>()
export const requestMeta = (request: Request): RequestMeta | undefined => metaByRequest.get(request)
