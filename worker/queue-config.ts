import type { WorkerOptions } from 'bullmq'
import type { QueueName } from '../shared/queue-names'

/**
 * Per-queue worker settings, each with its reason (conventions §8). Concurrency is per worker
 * process; operators add processes per queue with WORKER_QUEUES to scale further.
 */
export const QUEUE_WORKER_OPTIONS: Record<QueueName, Partial<WorkerOptions>> = {
  // Each job is tiny and the processor inserts many leads per statement; high concurrency keeps
  // the multi-row batches full under ad-campaign bursts.
  'lead-ingest': { concurrency: 64 },
  // Mostly storage HEAD/GET calls: I/O bound.
  'upload-complete': { concurrency: 8 },
  // CPU bound (sharp); sharp uses its own thread pool, so more jobs than cores only adds memory.
  // worker/runtime.ts sets it to IMAGE_THREADS + 1 (one job per thread, one fetching/storing).
  'image-watermark': { concurrency: 2 },
  // Short SQL rebuilds.
  'catalogue-reindex': { concurrency: 8 },
  // Waits on remote endpoints that may hang until the request timeout: many in flight, so one
  // slow endpoint never blocks the others.
  outreach: { concurrency: 50 },
}
