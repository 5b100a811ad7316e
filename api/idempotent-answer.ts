import type { IdempotentResult } from '../shared/platform/idempotency'

/**
 * What a route answers for an operation run under `Idempotency-Key` (api-spec §8): the status and
 * body it stored, with `Idempotent-Replayed: true` when this is a replay.
 */
export function idempotentAnswer<B>(set: { status?: unknown; headers: Record<string, unknown> }, result: IdempotentResult<B>): B {
  if (result.replayed) set.headers['idempotent-replayed'] = 'true'
  set.status = result.status
  return result.body
}
