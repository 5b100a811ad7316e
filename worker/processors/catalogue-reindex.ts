/**
 * catalogue-reindex (architecture.md "Queues"): rebuilds catalogue rows from the source tables
 * when something derived changed (an image became ready, a subtype label changed, …). Safe to
 * run twice: a rebuild only ever writes what the source tables say now.
 */
import { UnrecoverableError, type Job } from 'bullmq'
import { Value } from '@sinclair/typebox/value'
import { rebuildCatalogueEntry, reindexCatalogueSlice } from '../../shared/listings/operations'
import { CatalogueReindexPayload } from '../../shared/platform/jobs'
import type { WorkerDeps } from '../deps'

export async function processCatalogueReindex(deps: Pick<WorkerDeps, 'database' | 'queues'>, job: Job): Promise<unknown> {
  if (!Value.Check(CatalogueReindexPayload, job.data)) throw new UnrecoverableError(`invalid catalogue-reindex payload: ${JSON.stringify(job.data)}`)
  const payload = job.data
  if ('propertyId' in payload) return { propertyId: payload.propertyId, result: await rebuildCatalogueEntry(deps, payload.propertyId) }
  return reindexCatalogueSlice(deps, payload)
}
