/**
 * Which failures mean "a backing service is unavailable, retry shortly" (a 503 for a request, a
 * retry for a job), classified by error class and driver code, never by message text.
 */
import { ReplyError } from 'ioredis'
import { ServiceUnavailableError } from './errors'

/**
 * postgres.js codes for a connection that could not be made or was lost, and the SQLSTATEs of a
 * server shutting down or refusing connections (57P0x, 08xxx). COMMIT_ROLLED_BACK
 * (patches/README.md §5): the COMMIT was answered ROLLBACK, so nothing was written and a retry is safe.
 * During a failover (docs/operations.md "Failover"): TARGET_SESSION_ATTRS, no host of a multi-host
 * URL is a primary yet (patches/README.md §6); 25006, a write reached a server that is read-only.
 * 57014: a statement cancelled by the server's `statement_timeout` (an operator's bound on a
 * struggling database; the product never cancels its own statements). 08P01: what a pooler
 * (PgBouncer) answers, FATAL, when it cannot give the client a server ("server login has been
 * failing", `query_wait_timeout`): the node behind it is down or not reachable yet.
 */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'TARGET_SESSION_ATTRS',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
  '08P01',
])
const UNAVAILABLE_CODES = new Set([...CONNECTION_CODES, 'COMMIT_ROLLED_BACK', '25006', '57014'])

/** The error and the causes it wraps, outermost first (at most four deep). */
function* causes(error: unknown): Generator<unknown> {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) yield e
}

const hasCode = (e: unknown, codes: Set<string>) => {
  const code = (e as { code?: unknown }).code
  return typeof code === 'string' && codes.has(code)
}

export function isUnavailableError(error: unknown): boolean {
  for (const e of causes(error)) if (e instanceof ServiceUnavailableError || hasCode(e, UNAVAILABLE_CODES)) return true
  return false
}

/**
 * The failures of isUnavailableError in which PostgreSQL could not be reached at all (a refused,
 * lost or timed-out connection, a server shutting down, no primary among the hosts), as opposed
 * to a reachable server refusing one statement (a statement timeout, a read-only server, a
 * rolled-back COMMIT). An overloaded server answers the latter; only the former says that
 * waiting for it is pointless.
 */
export function isConnectionError(error: unknown): boolean {
  for (const e of causes(error)) if (hasCode(e, CONNECTION_CODES)) return true
  return false
}

/**
 * What an operator needs from a connection-level failure: the driver's code, the server's severity
 * (FATAL: the connection is gone) and its own message, not the query's.
 */
export function unavailableCause(error: unknown): { code?: string; severity?: string; error: string } {
  let root: unknown = error
  for (let depth = 0; depth < 4 && (root as { cause?: unknown })?.cause; depth++) root = (root as { cause: unknown }).cause
  // PgBouncer sends only the localized severity (S), PostgreSQL both (S and V).
  const { code, severity: v, severity_local: s } = (root ?? {}) as { code?: unknown; severity?: unknown; severity_local?: unknown }
  const severity = v ?? s
  return {
    ...(typeof code === 'string' ? { code } : {}),
    ...(typeof severity === 'string' ? { severity } : {}),
    error: String((root as Error)?.message ?? root),
  }
}

/**
 * Redis's error codes (the first word of an error reply) that mean "this node cannot take the
 * command now": a demoted master (READONLY), a replica cut from its master or still loading.
 */
const REDIS_UNAVAILABLE_CODES = new Set(['READONLY', 'MASTERDOWN', 'LOADING', 'NOREPLICAS'])

/**
 * A failed Redis call as the producer reports it: Redis's own answers (ReplyError: a script or
 * command refused) pass through, except the codes of a node in a failover; anything the client
 * raised itself (closed connection, offline, retries exhausted, timeout) means Redis could not be
 * reached.
 */
export function asRedisFailure(error: unknown): unknown {
  if (!(error instanceof ReplyError)) return new ServiceUnavailableError('Redis', error)
  return REDIS_UNAVAILABLE_CODES.has((error as Error).message.split(' ', 1)[0]) ? new ServiceUnavailableError('Redis', error) : error
}
