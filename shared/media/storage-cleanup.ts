/**
 * Deleting objects from storage once nothing references them (contract §9.1, §9.4): an image or
 * video deleted, a listing deleted, an original no longer needed, a transcode's partial output.
 * The objects are written to `storage_deletions` in the transaction that stops referencing them,
 * so a crash can never leave a public copy behind; the `storage-cleanup` worker deletes them and
 * the row together, retried until done, and the maintenance sweep queues rows whose job is gone.
 */
import type { Db } from '../../db/client'
import {
  deleteDeletion,
  deletionsOlderThan,
  insertDeletions,
  lockDeletion,
  recordDeletionFailure,
  type DeletionArea,
  type DeletionKind,
} from '../../db/queries/storage-deletions'
import { JOBS, type JobDataHooks } from '../platform/jobs'
import type { Services } from '../platform/services'

export interface Deletion {
  area: DeletionArea
  /** An object key, or for `prefix` a prefix ending with `/`. */
  key: string
  kind?: DeletionKind
  /** Not before this time: an upload URL may still write the object until then. */
  notBefore?: Date | null
}

/** Rows written by `scheduleDeletions`, to queue once their transaction committed. */
export interface ScheduledDeletion {
  id: number
  notBefore: Date | null
}

/** Writes the deletions in the caller's transaction (the one that stops referencing the objects). */
export async function scheduleDeletions(tx: Db, deletions: Deletion[]): Promise<ScheduledDeletion[]> {
  const unique = [...new Map(deletions.map((d) => [`${d.area}:${d.kind ?? 'object'}:${d.key}`, d])).values()]
  const ids = await insertDeletions(
    tx,
    unique.map((d) => ({ area: d.area, key: d.key, kind: d.kind })),
  )
  return ids.map((id, i) => ({ id, notBefore: unique[i].notBefore ?? null }))
}

/**
 * Queues committed deletions. A failed enqueue is logged, not thrown: the rows are in
 * PostgreSQL and the maintenance sweep queues them later, so the caller's answer stands.
 */
export async function queueDeletions(deps: Pick<Services, 'queues' | 'logger'>, scheduled: ScheduledDeletion[]): Promise<void> {
  for (const d of scheduled) {
    const delay = d.notBefore ? Math.max(0, d.notBefore.getTime() - Date.now()) : 0
    try {
      await deps.queues.enqueue('storage-cleanup', { deletionId: d.id }, delay ? { delay } : {})
    } catch (error) {
      deps.logger.warn('storage-cleanup enqueue failed; the maintenance sweep will queue it', { deletion_id: d.id, error: (error as Error).message })
    }
  }
}

/** Another transaction holds the row (a cleanup of it, or a transcode still deciding about its prefix): try later. */
export class DeletionBusyError extends Error {
  override name = 'DeletionBusyError'
}

export type DeletionProcessed = { deleted: number } | { skipped: 'gone' }

/**
 * The storage-cleanup job: deletes the row's object (or every object under its prefix) while
 * holding the row's lock, then the row, in one transaction. A transcode that wants its prefix
 * back deletes the same row and so waits for this to finish, then finds it gone (and redoes its
 * work). Safe to run twice: a deleted object is not an error, a missing row is done.
 */
export async function processDeletion(deps: Pick<Services, 'database' | 'storage'>, deletionId: number): Promise<DeletionProcessed> {
  const { db } = deps.database
  try {
    return await db.transaction(async (tx) => {
      const row = await lockDeletion(tx, deletionId)
      if (row === null) return { skipped: 'gone' as const }
      if (row === 'busy') throw new DeletionBusyError(`storage deletion ${deletionId} is held by another transaction`)
      let deleted = 1
      if (row.kind === 'prefix') deleted = await deps.storage.deletePrefix(row.area, row.key)
      else await deps.storage.delete(row.area, row.key)
      await deleteDeletion(tx, row.id)
      return { deleted }
    })
  } catch (error) {
    if (!(error instanceof DeletionBusyError)) await recordDeletionFailure(db, deletionId, (error as Error)?.message ?? String(error)).catch(() => {})
    throw error
  }
}

/** Rows this old have had their job: one still there lost it (Redis, a failed enqueue) or used up its attempts. */
const LEFTOVER_AFTER_MS = 30 * 60 * 1000
const SWEEP_BATCH = 1000

/**
 * Maintenance task: every row still waiting after LEFTOVER_AFTER_MS is queued again. A job that
 * is missing is added; one that used up its attempts (kept in the failed set) is replaced by a
 * new one, since a deletion is retried until done (contract §9.1). Rows whose job is still live
 * (waiting, delayed, active) are left to it.
 */
export async function sweepStorageDeletions(
  deps: Pick<Services, 'database' | 'queues' | 'logger'>,
  options: { olderThanMs?: number } = {},
): Promise<{ requeued: number }> {
  const ids = await deletionsOlderThan(deps.database.db, options.olderThanMs ?? LEFTOVER_AFTER_MS, SWEEP_BATCH)
  if (ids.length === 0) return { requeued: 0 }
  const def = JOBS['storage-cleanup']
  const jobIds = ids.map((id) => def.jobId({ deletionId: id }))
  const presence = await deps.queues.presenceOf(def.queue, jobIds)
  let requeued = 0
  for (let i = 0; i < ids.length; i++) {
    const state = presence.get(jobIds[i])
    if (state === 'live') continue
    if (state === 'failed')
      await deps.queues
        .get(def.queue)
        .remove(jobIds[i])
        .catch(() => {})
    await deps.queues.enqueue('storage-cleanup', { deletionId: ids[i] })
    requeued++
  }
  if (requeued) deps.logger.warn('storage deletions queued again', { requeued })
  return { requeued }
}

/**
 * Exhaustion of a cleanup job (docs/operations.md "Exhausted jobs"): the row is its visible terminal state
 * (attempts and last error), kept; the sweep queues it again, so a deletion never stops for good.
 */
export const STORAGE_CLEANUP_HOOKS: JobDataHooks<'storage-cleanup'> = {
  exhausted: async () => {},
  reopen: async () => {},
  abandon: async () => {},
}
