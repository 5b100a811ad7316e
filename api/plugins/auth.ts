/**
 * `scope` macro: every /v1 route names the scope it needs (api-spec §4), or 'any' (`GET /me`).
 * The key itself was authenticated by the http plugin before parsing; this checks the scope
 * before validation (403 beats 422) and hands the handler its `auth` context.
 */
import { Elysia } from 'elysia'
import { AppError } from '../../shared/errors'
import type { Scope } from '../../shared/scopes'
import { requireScope, type AuthContext } from '../key-store'
import { requestMeta } from './http'

function authOf(request: Request): AuthContext {
  const auth = requestMeta(request)?.auth
  // Unreachable for /v1 routes; guards against a route mounted outside /v1 by mistake.
  if (!auth) throw new AppError('unauthorized', 'Missing API key: send it in the X-Api-Key header')
  return auth
}

export const authPlugin = new Elysia({ name: 'auth' }).macro({
  scope: (scope: Scope | 'any') => ({
    transform({ request }) {
      if (scope !== 'any') requireScope(authOf(request), scope)
    },
    resolve({ request }) {
      return { auth: authOf(request) }
    },
    detail: {
      security: [{ ApiKeyHeader: [] }, { ApiKeyAuthorization: [] }],
      'x-required-scope': scope === 'any' ? null : scope,
    } as Record<string, unknown>,
  }),
})
