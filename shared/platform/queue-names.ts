/**
 * The queues: the five of contract §7, and those of version 1.1 (video-transcode: contract §9.3;
 * storage-cleanup: §9.1, §9.4; webhook-delivery: §10.2; lead-erasure: §13). The job catalog in `jobs.ts` describes each.
 */
export const QUEUE_NAMES = [
  'lead-ingest',
  'upload-complete',
  'image-watermark',
  'catalogue-reindex',
  'outreach',
  'video-transcode',
  'storage-cleanup',
  'webhook-delivery',
  'lead-erasure',
] as const
export type QueueName = (typeof QUEUE_NAMES)[number]
