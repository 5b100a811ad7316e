import { UnrecoverableError, type Job } from 'bullmq'
import type { WorkerDeps } from '../deps'

export async function processOutreach(_deps: WorkerDeps, _job: Job): Promise<void> {
  throw new UnrecoverableError('the outreach processor is not built yet')
}
