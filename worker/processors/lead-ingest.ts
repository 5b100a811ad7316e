/**
 * lead-ingest (architecture.md "Queues"): inserts one micro-batch of accepted rental leads with
 * one multi-row `INSERT … ON CONFLICT DO NOTHING` on (business, primary phone). A duplicate
 * creates and updates nothing, so running a job twice — or after the API's fallback already
 * stored the batch — changes nothing.
 */
import { UnrecoverableError, type Job } from 'bullmq'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { storeIngestBatch } from '../../shared/leads/operations'
import { LeadIngestPayload } from '../../shared/platform/jobs'
import type { WorkerDeps } from '../deps'

const payloadCheck = TypeCompiler.Compile(LeadIngestPayload)

export async function processLeadIngest(deps: Pick<WorkerDeps, 'config' | 'database' | 'logger'>, job: Job): Promise<{ received: number; created: number }> {
  if (!payloadCheck.Check(job.data)) throw new UnrecoverableError(`invalid lead-ingest payload: ${[...payloadCheck.Errors(job.data)].slice(0, 3).map((e) => `${e.path} ${e.message}`).join('; ')}`)
  const { leads } = job.data
  const created = await storeIngestBatch(deps, leads)
  return { received: leads.length, created }
}
