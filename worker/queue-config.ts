import type { WorkerOptions } from 'bullmq'
import type { QueueName } from '../shared/queue-names'

/**
 * Per-queue worker settings, each with its reason (conventions §8). Concurrency is per worker
 * process; operators add processes per queue with WORKER_QUEUES to scale further.
 */
export const QUEUE_WORKER_OPTIONS: Record<QueueName, Partial<WorkerOptions>> = {
  // Each job is one API micro-batch (up to INGEST_BATCH_MAX leads) inserted by ONE statement, so
  // throughput comes from batch size, not from many jobs in flight. 8 overlaps BullMQ's Redis
  // round-trips (fetch, complete) with PostgreSQL inserts; more would only queue on the shared
  // DB pool and contend on the phone index without adding throughput on a few cores.
  'lead-ingest': { concurrency: 8 },
  // Mostly storage HEAD/GET calls: I/O bound.
  'upload-complete': { concurrency: 8 },
  // CPU bound (sharp); sharp uses its own thread pool, so more jobs than cores only adds memory.
  'image-watermark': { concurrency: 2 },
  // Short SQL rebuilds.
  'catalogue-reindex': { concurrency: 8 },
  // Waits on remote endpoints that may hang until the request timeout: many in flight, so one
  // slow endpoint never blocks the others.
  outreach: { concurrency: 50 },
}
