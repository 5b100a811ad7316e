/**
 * catalogue-reindex (architecture.md "Queues"): rebuilds catalogue rows from the source tables
 * when something derived changed (an image became ready, a subtype label changed, …). Safe to
 * run twice: a rebuild only ever writes what the source tables say now.
 */
import { UnrecoverableError, type Job } from 'bullmq'
import { Value } from '@sinclair/typebox/value'
import { rebuildCatalogueBatch, rebuildCatalogueEntry } from '../../db/queries/catalogue'
import { CatalogueReindexPayload } from '../../shared/platform/jobs'
import type { WorkerDeps } from '../deps'

export async function processCatalogueReindex(deps: Pick<WorkerDeps, 'database' | 'queues'>, job: Job): Promise<unknown> {
  if (!Value.Check(CatalogueReindexPayload, job.data)) throw new UnrecoverableError(`invalid catalogue-reindex payload: ${JSON.stringify(job.data)}`)
  const payload = job.data
  const { db } = deps.database
  if ('propertyId' in payload) {
    const result = await db.transaction((tx) => rebuildCatalogueEntry(tx, payload.propertyId))
    return { propertyId: payload.propertyId, result }
  }
  // A batch rebuilds one slice of a business and queues the next, so a whole-business reindex
  // is many short jobs (each retried on its own) rather than one long one.
  const result = await rebuildCatalogueBatch(db, payload)
  if (result.lastId !== null) {
    await deps.queues.enqueue('catalogue-reindex', { businessId: payload.businessId, afterId: result.lastId, batchSize: payload.batchSize })
  }
  return result
}
