/**
 * storage-cleanup (contract §9.1, §9.4): deletes one `storage_deletions` row's object, or every
 * object under its prefix, then the row (shared/media/storage-cleanup.ts, processDeletion).
 * Storage trouble throws and is retried; the row keeps its attempts and last error meanwhile.
 */
import { UnrecoverableError, type Job } from 'bullmq'
import { Value } from '@sinclair/typebox/value'
import { StorageCleanupPayload } from '../../shared/platform/jobs'
import { processDeletion, type DeletionProcessed } from '../../shared/media/storage-cleanup'
import type { WorkerDeps } from '../deps'

export async function processStorageCleanup(deps: WorkerDeps, job: Pick<Job, 'data'>): Promise<DeletionProcessed> {
  if (!Value.Check(StorageCleanupPayload, job.data)) throw new UnrecoverableError('invalid storage-cleanup payload')
  return processDeletion(deps, job.data.deletionId)
}
