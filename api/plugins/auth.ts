/**
 * `operation` macro: every /v1 route names its row of the operations table
 * (shared/access/operations.ts), which gives its operationId and the scope it needs (api-spec §4),
 * or 'any' (`GET /me`). The key itself was authenticated by the http plugin before parsing; this
 * checks the scope before validation (403 beats 422) and hands the handler its `auth` context.
 * `scope` alone is the same check for a route outside the table (tests mount such routes);
 * `preflight` names the row of a keyless CORS preflight (contract §16.2).
 */
import { Elysia } from 'elysia'
import { AppError } from '../../shared/platform/errors'
import type { Scope } from '../../shared/access/scopes'
import { OPERATIONS, type OperationId } from '../../shared/access/operations'
import { requireScope, type AuthContext } from '../../shared/access/key-store'
import { requestMeta } from '../request-meta'

function authOf(request: Request): AuthContext {
  const auth = requestMeta(request)?.auth
  // Unreachable for /v1 routes; guards against a route mounted outside /v1 by mistake.
  if (!auth) throw new AppError('unauthorized', 'Missing API key: send it in the X-Api-Key header')
  return auth
}

/**
 * The scope check of an operation, for a route's own `transform` that must answer after it (a
 * route's transform runs before the macro's).
 */
export function requireOperationScope(request: Request, id: OperationId): void {
  const scope = OPERATIONS[id].scope
  if (scope !== 'any' && scope !== 'none') requireScope(authOf(request), scope)
}

/** A CORS preflight (contract §16.2): no key, no scope; the http plugin answers it before authentication. */
const keyless = (detail: Record<string, unknown>) => ({ detail: { ...detail, security: [], 'x-required-scope': null } as Record<string, unknown> })

const scoped = (scope: Scope | 'any', detail: Record<string, unknown> = {}) => ({
  transform({ request }: { request: Request }) {
    if (scope !== 'any') requireScope(authOf(request), scope)
  },
  resolve({ request }: { request: Request }) {
    return { auth: authOf(request) }
  },
  detail: {
    ...detail,
    security: [{ ApiKeyHeader: [] }, { ApiKeyAuthorization: [] }],
    'x-required-scope': scope === 'any' ? null : scope,
  } as Record<string, unknown>,
})

export const authPlugin = new Elysia({ name: 'auth' }).macro({
  operation: (id: OperationId) => scoped(OPERATIONS[id].scope as Scope | 'any', { operationId: id }),
  preflight: (id: OperationId) => keyless({ operationId: id }),
  scope: (scope: Scope | 'any') => scoped(scope),
})
