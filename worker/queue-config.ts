import type { WorkerOptions } from 'bullmq'
import type { Config } from '../shared/platform/config'
import { outreachBackoffMs } from '../shared/outreach/delivery'
import type { QueueName } from '../shared/platform/queue-names'

/**
 * Per-queue worker settings, each with its reason (conventions §8). Concurrency is per worker
 * process; operators add processes per queue with WORKER_QUEUES to scale further.
 */
export const QUEUE_WORKER_OPTIONS: Record<QueueName, Partial<WorkerOptions>> = {
  // Each job is one API micro-batch; jobs in flight in a process share one transaction
  // (worker/ingest-coalescer.ts), so the more are in flight the fuller each transaction. The rest
  // of a job's time is BullMQ's fetch and complete in Redis. `bun run bench ingest` on 2 cores,
  // 2 processes, 2026-11-27: 17.0k leads/s at 32, 19.6–20.6k at 100 (docs/leads.md). Inserts
  // are ordered by (business, phone), so concurrent ones cannot deadlock on the phone index.
  // Jobs take milliseconds, so a short lock (renewed every 5 s) and a stalled check every 5 s
  // hand a dead worker's jobs to another within ~15 s instead of BullMQ's ~60 s default.
  'lead-ingest': { concurrency: 100, lockDuration: 10_000, stalledInterval: 5_000 },
  // Mostly storage HEAD/GET calls: I/O bound.
  'upload-complete': { concurrency: 8 },
  // CPU bound (sharp); sharp uses its own thread pool, so more jobs than cores only adds memory.
  // worker/runtime.ts sets it to IMAGE_THREADS + 1 (one job per thread, one fetching/storing).
  'image-watermark': { concurrency: 2 },
  // Short SQL rebuilds.
  'catalogue-reindex': { concurrency: 8 },
  // I/O bound: a job mostly waits on a remote endpoint, which may hang until
  // OUTREACH_TIMEOUT_MS. With 50 in flight per process a hanging endpoint occupies one slot per
  // delivery it is sent, each for at most one timeout (the retry then waits in the delayed set
  // holding no slot), so other businesses' deliveries keep flowing; only a burst of 50 deliveries
  // to hanging endpoints at the same moment could delay others, by at most one timeout. The cost
  // of a slot is a socket and a few KB, so more processes (WORKER_QUEUES=outreach) scale it out.
  outreach: { concurrency: 50 },
  // ffmpeg uses every core for one transcode, so one at a time per process (VIDEO_CONCURRENCY,
  // set in workerOptionsFor); operators add processes with WORKER_QUEUES=video-transcode. Jobs
  // run for minutes: the lock is renewed every 7.5 s while ffmpeg runs, and a worker killed
  // mid-transcode (kill -9) has its job handed to another within ~25 s (lock 15 s + check 10 s),
  // which starts it again from the original.
  'video-transcode': { concurrency: 1, lockDuration: 15_000, stalledInterval: 10_000 },
  // Storage DELETE calls: I/O bound and short.
  'storage-cleanup': { concurrency: 8 },
  // One job is one endpoint's runner (shared/webhooks/delivery.ts): it sends that endpoint's due
  // deliveries, WEBHOOK_ENDPOINT_CONCURRENCY at a time, for a few seconds, then makes way. A slow
  // or failing endpoint therefore holds one of these slots, never more: with 64 per process and
  // at most 16 endpoints per business, one business's endpoints can never take every slot, and
  // another business's runner starts at once (contract §10.2 fairness; test/worker/webhook-fairness).
  // A short lock hands a killed worker's runner to another within ~15 s.
  'webhook-delivery': { concurrency: 64, lockDuration: 10_000, stalledInterval: 5_000 },
  // A few Redis scans per erased lead; rare.
  'lead-erasure': { concurrency: 2 },
}

/**
 * What a queue's jobs do when PostgreSQL is unreachable (docs/operations.md "Exhausted jobs"). `wait`: the
 * job goes back to the delayed set without using up an attempt, for as long as the outage lasts,
 * with a growing wait (unavailableRetryDelayMs), counted in Redis and logged at error level
 * (worker/runtime.ts). `attempt`: an outage counts as a failed attempt like any other error.
 */
export const QUEUE_UNAVAILABLE_POLICY: Record<QueueName, 'wait' | 'attempt'> = {
  // A batch of answered leads exists nowhere else: it must outlive any outage.
  'lead-ingest': 'wait',
  // The others' data is in PostgreSQL; one that exhausts during a long outage is `failed` and
  // kept, and `cli queues retry` runs it once the database is back.
  'upload-complete': 'attempt',
  'image-watermark': 'attempt',
  'catalogue-reindex': 'attempt',
  outreach: 'attempt',
  'video-transcode': 'attempt',
  // A deletion's row is in PostgreSQL and the storage sweep queues it again: never lost.
  'storage-cleanup': 'attempt',
  // A runner's deliveries are rows in PostgreSQL; while it is unreachable the runner waits
  // (nothing to mark, and the next runner would find the same rows).
  'webhook-delivery': 'wait',
  'lead-erasure': 'attempt',
}

/** The longest wait between two tries of a job waiting for PostgreSQL: an outage's end is noticed within this. */
export const UNAVAILABLE_MAX_WAIT_MS = 30_000

/**
 * Wait before the n-th try (n ≥ 1) of a job waiting for PostgreSQL: the job's own backoff delay
 * doubling, capped at 30 s (or 32 × the delay, when that is less, so tests with millisecond
 * backoffs stay quick): 1, 2, 4, 8, 16, 30, 30 … s with the ingest's 1 s.
 */
export function unavailableRetryDelayMs(n: number, baseMs: number): number {
  const cap = Math.min(UNAVAILABLE_MAX_WAIT_MS, baseMs * 32)
  return Math.max(Math.min(baseMs * 2 ** Math.min(Math.max(n, 1) - 1, 30), cap), Math.min(baseMs, UNAVAILABLE_MAX_WAIT_MS))
}

/**
 * The options a queue's Worker is built with: the table above plus what depends on config.
 * `video-transcode` runs VIDEO_CONCURRENCY jobs at once. `outreach` registers the custom backoff
 * its jobs name (`backoff: {type: 'outreach'}` in shared/platform/jobs.ts): base·2^(n−1) capped
 * (OUTREACH_BACKOFF_BASE_MS, OUTREACH_BACKOFF_MAX_MS).
 */
export function workerOptionsFor(name: QueueName, config: Config): Partial<WorkerOptions> {
  const options = QUEUE_WORKER_OPTIONS[name]
  if (name === 'video-transcode') return { ...options, concurrency: config.videoConcurrency }
  if (name !== 'outreach') return options
  return {
    ...options,
    settings: { backoffStrategy: (attemptsMade: number) => outreachBackoffMs(attemptsMade, config.outreachBackoffBaseMs, config.outreachBackoffMaxMs) },
  }
}
