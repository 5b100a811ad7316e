/** lead-erasure (contract §13): the Redis side of a lead's erasure (shared/leads/erasure.ts). */
import { UnrecoverableError, type Job } from 'bullmq'
import { Value } from '@sinclair/typebox/value'
import { LeadErasurePayload } from '../../shared/platform/jobs'
import { cleanUpErasedLead } from '../../shared/leads/operations'
import type { WorkerDeps } from '../deps'

export async function processLeadErasure(deps: Pick<WorkerDeps, 'config' | 'queues'>, job: Job): Promise<{ jobsScanned: number; leadsRemoved: number }> {
  if (!Value.Check(LeadErasurePayload, job.data)) throw new UnrecoverableError('invalid lead-erasure payload')
  return cleanUpErasedLead(deps, job.data)
}
