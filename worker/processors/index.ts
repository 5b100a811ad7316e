import type { Job } from 'bullmq'
import type { QueueName } from '../../shared/platform/queue-names'
import type { WorkerDeps } from '../deps'

/** BullMQ calls it with the job and the worker's lock token (needed to move the job to delayed). */
export type Processor = (job: Job, token?: string) => Promise<unknown>

/** One processor per queue; each validates its payload against the job catalog. */
export const PROCESSORS: Record<QueueName, (deps: WorkerDeps) => Processor> = {
  'lead-ingest': (deps) => async (job) => (await import('./lead-ingest')).processLeadIngest(deps, job),
  'upload-complete': (deps) => async (job) => (await import('./upload-complete')).processUploadComplete(deps, job),
  'image-watermark': (deps) => async (job) => (await import('./image-watermark')).processImageWatermark(deps, job),
  'catalogue-reindex': (deps) => async (job) => (await import('./catalogue-reindex')).processCatalogueReindex(deps, job),
  outreach: (deps) => async (job) => (await import('./outreach')).processOutreach(deps, job),
  'video-transcode': (deps) => async (job) => (await import('./video-transcode')).processVideo(deps, job),
  'storage-cleanup': (deps) => async (job) => (await import('./storage-cleanup')).processStorageCleanup(deps, job),
  'webhook-delivery': (deps) => async (job) => (await import('./webhook-delivery')).processWebhookDelivery(deps, job),
  'lead-erasure': (deps) => async (job) => (await import('./lead-erasure')).processLeadErasure(deps, job),
}
