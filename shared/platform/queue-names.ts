/** The five queues of contract §7; the job catalog in `jobs.ts` describes each. */
export const QUEUE_NAMES = ['lead-ingest', 'upload-complete', 'image-watermark', 'catalogue-reindex', 'outreach'] as const
export type QueueName = (typeof QUEUE_NAMES)[number]
