import { UnrecoverableError, type Job } from 'bullmq'
import type { WorkerDeps } from '../deps'

export async function processCatalogueReindex(_deps: WorkerDeps, _job: Job): Promise<void> {
  throw new UnrecoverableError('the catalogue-reindex processor is not built yet')
}
