/**
 * What the HTTP tier learns about a request before routing (api/plugins/http.ts): its id, its
 * authenticated key, its JSON body text. Kept beside the request, not in it, and read by the
 * auth plugin and the error and log hooks.
 */
import type { AuthContext } from '../shared/access/key-store'

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
}

export const metaByRequest = new WeakMap<Request, RequestMeta>()
export const requestMeta = (request: Request): RequestMeta | undefined => metaByRequest.get(request)

