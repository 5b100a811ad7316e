import { UnrecoverableError, type Job } from 'bullmq'
import type { WorkerDeps } from '../deps'

export async function processUploadComplete(_deps: WorkerDeps, _job: Job): Promise<void> {
  throw new UnrecoverableError('the upload-complete processor is not built yet')
}
