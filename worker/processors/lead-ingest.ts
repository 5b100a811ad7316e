import { UnrecoverableError, type Job } from 'bullmq'
import type { WorkerDeps } from '../deps'

export async function processLeadIngest(_deps: WorkerDeps, _job: Job): Promise<void> {
  throw new UnrecoverableError('the lead-ingest processor is not built yet')
}
