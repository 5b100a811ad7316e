/**
 * Periodic housekeeping run by every worker process (safe when several run it at once):
 * expired idempotency keys (api-spec §8: 24 h window); outreach deliveries left pending without
 * a job when the API's enqueue failed (docs/outreach.md); expired upload sessions and the
 * originals of failed or abandoned uploads (contract §5); uploads, images and videos left
 * processing without a live job, and video uploads never completed (docs/operations.md "Exhausted jobs":
 * nothing stays processing for ever); storage deletions whose job was lost or gave up
 * (contract §9.1: retried until done); catalogue rows built by an earlier version of the public
 * document, queued for rebuilding (also at start-up); and, on a server without autovacuum, a
 * VACUUM of the tables traffic churns.
 */
import { deleteExpiredIdempotencyAnswers } from '../shared/platform/idempotency'
import { recoverMediaJobs, sweepUploads } from '../shared/media/operations'
import { sweepStorageDeletions } from '../shared/media/storage-cleanup'
import { sweepVideos } from '../shared/media/videos'
import type { WorkerDeps } from './deps'
import { sweepOutreachDeliveries } from '../shared/outreach/operations'
import { sweepOldEvents } from '../shared/events/operations'
import { upgradeCatalogueDocs } from '../shared/listings/catalogue-upgrade'
import { vacuumWithoutAutovacuum } from '../shared/platform/vacuum'

const INTERVAL_MS = 10 * 60 * 1000

export type MaintenanceTask = (deps: WorkerDeps) => Promise<unknown>

export const MAINTENANCE_TASKS: Record<string, MaintenanceTask> = {
  'idempotency-keys': (deps) => deleteExpiredIdempotencyAnswers(deps.database.db),
  'outreach-sweep': (deps) => sweepOutreachDeliveries(deps),
  uploads: (deps) => sweepUploads(deps),
  'media-jobs': (deps) => recoverMediaJobs(deps),
  videos: (deps) => sweepVideos(deps),
  'storage-deletions': (deps) => sweepStorageDeletions(deps),
  // contract §10.1: events are kept 30 days (their webhook deliveries go with them).
  events: (deps) => sweepOldEvents(deps),
  // Run at start-up too (startMaintenance); here again in case queueing failed then.
  'catalogue-upgrade': (deps) => upgradeCatalogueDocs(deps),
  // Last, after the sweeps' deletes; only when the server's autovacuum is off (docs/operations.md).
  vacuum: (deps) => vacuumWithoutAutovacuum(deps),
}

export function startMaintenance(deps: WorkerDeps): { stop(): void; runOnce(): Promise<void> } {
  const runOnce = async () => {
    for (const [name, task] of Object.entries(MAINTENANCE_TASKS)) {
      try {
        await task(deps)
      } catch (error) {
        deps.logger.warn('maintenance task failed', { task: name, error: (error as Error).message })
      }
    }
  }
  const timer = setInterval(() => void runOnce(), INTERVAL_MS)
  timer.unref?.()
  // A deploy that changes the public document rebuilds the stored rows without waiting a round.
  void MAINTENANCE_TASKS['catalogue-upgrade'](deps).catch((error) =>
    deps.logger.warn('maintenance task failed', { task: 'catalogue-upgrade', error: (error as Error).message }),
  )
  return { stop: () => clearInterval(timer), runOnce }
}
