/**
 * Idempotency-Key (api-spec §8, architecture.md): one mechanism for every create. The first
 * request claims (API key, operation, key) with an insert that cannot race; its writes and the
 * stored answer commit in one transaction, so a crash leaves either both or neither. A twin
 * arriving meanwhile waits for the answer and replays it; another body under the same key is 409.
 */
import { createHash } from 'node:crypto'
import type { Db } from '../../db/client'
import {
  claimIdempotencyKey, completeIdempotencyKey, deleteExpiredIdempotencyKeys, findIdempotencyKey, reclaimIdempotencyKey, releaseIdempotencyKey,
} from '../../db/queries/idempotency'
import { AppError } from './errors'
import type { OperationId } from '../access/operations'

export interface IdempotentResult<B = unknown> {
  status: number
  body: B
  replayed: boolean
}

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]

/** How long a twin waits for the first request before answering 409. */
const WAIT_FOR_TWIN_MS = 10_000
/** An in-progress claim older than this belongs to a request that died; it may be taken over. */
const ABANDONED_AFTER_MS = 60_000
const DAY_MS = 24 * 3600 * 1000

export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex')
}

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` are the same request. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
}

/**
 * Runs `handler` at most once per (apiKeyId, operation, key) within 24 h. Without a key it just
 * runs it in a transaction. Answers below 500 (including 409 and 422 from the handler) are
 * stored and replayed; a 5xx or crash releases the key so the client can retry.
 */
export async function idempotent<B>(
  db: Db,
  scope: { apiKeyId: number; operation: OperationId; key: string | undefined; body: unknown },
  handler: (tx: Tx) => Promise<{ status: number; body: B }>,
): Promise<IdempotentResult<B>> {
  if (scope.key === undefined) {
    const result = await db.transaction(handler)
    return { ...result, replayed: false }
  }
  const hash = requestHash(scope.body)
  const deadline = Date.now() + WAIT_FOR_TWIN_MS
  for (;;) {
    let claimId = await claimIdempotencyKey(db, scope.apiKeyId, scope.operation, scope.key, hash)
    if (claimId === null) {
      const row = await findIdempotencyKey(db, scope.apiKeyId, scope.operation, scope.key)
      if (!row) continue // deleted between insert and select: claim again
      const expired = row.ageMs >= DAY_MS
      const abandoned = row.state === 'in_progress' && row.ageMs >= ABANDONED_AFTER_MS
      if (!expired && row.requestHash !== hash) {
        throw new AppError('idempotency_conflict', 'This Idempotency-Key was already used with a different request body')
      }
      if (!expired && row.state === 'done') {
        return unwrapStoredError({ status: row.responseStatus!, body: row.responseBody as B, replayed: true })
      }
      if (expired || abandoned) {
        if (await reclaimIdempotencyKey(db, row.id, hash)) claimId = row.id
        else continue
      } else {
        if (Date.now() > deadline) throw new AppError('idempotency_conflict', 'A request with this Idempotency-Key is still being processed; retry later')
        await Bun.sleep(25)
        continue
      }
    }
    return runClaimed(db, claimId!, handler)
  }
}

async function runClaimed<B>(db: Db, claimId: number, handler: (tx: Tx) => Promise<{ status: number; body: B }>): Promise<IdempotentResult<B>> {
  try {
    const result = await db.transaction(async (tx) => {
      const r = await handler(tx)
      await completeIdempotencyKey(tx, claimId, r.status, r.body)
      return r
    })
    return { ...result, replayed: false }
  } catch (error) {
    if (error instanceof AppError && error.status < 500) {
      // A refusal is an answer too: store it so a retry gets the same one.
      const body = { __error: { code: error.code, detail: error.detail, errors: error.errors, extra: error.extra } }
      await completeIdempotencyKey(db, claimId, error.status, body).catch(() => {})
      throw error
    }
    await releaseIdempotencyKey(db, claimId).catch(() => {})
    throw error
  }
}

/** Rebuilds a stored refusal as the same AppError; passes answers through. */
function unwrapStoredError<B>(result: IdempotentResult<B>): IdempotentResult<B> {
  const stored = (result.body as { __error?: { code: AppError['code']; detail: string; errors?: AppError['errors']; extra?: Record<string, unknown> } })?.__error
  if (stored) throw new AppError(stored.code, stored.detail, { errors: stored.errors, extra: stored.extra })
  return result
}

/** Housekeeping: answers older than the 24 h window are never replayed again (api-spec §8). */
export const deleteExpiredIdempotencyAnswers = (db: Db) => deleteExpiredIdempotencyKeys(db)
