import { UnrecoverableError, type Job } from 'bullmq'
import type { WorkerDeps } from '../deps'

export async function processImageWatermark(_deps: WorkerDeps, _job: Job): Promise<void> {
  throw new UnrecoverableError('the image-watermark processor is not built yet')
}
