/**
 * Per-queue figures read from Redis (so every replica and the CLI see the same numbers): job
 * counts by state, finished-job totals from BullMQ's metrics, which every worker records
 * (worker/runtime.ts sets `metrics`), and how often a job waited for an unreachable database
 * instead of failing (a counter the workers keep next to the queue's keys). Used by `/metrics`
 * and `bun run cli queues`.
 */
import { QUEUE_NAMES, type QueueName } from './queue-names'
import type { Queues } from './queues'

export const JOB_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'failed', 'completed'] as const
export type JobState = (typeof JOB_STATES)[number]

export interface QueueFigures {
  queue: QueueName
  /** Jobs per state now. `completed` stays 0 for queues that remove finished jobs (lead-ingest, catalogue-reindex). */
  counts: Record<JobState, number>
  /** Jobs finished since the queue was created, by outcome (every attempt that failed counts once). */
  processed: { completed: number; failed: number }
  /** Times a job of the queue was put back to wait because PostgreSQL was unreachable (since the queue was created). */
  waits: { unavailable: number }
  paused: boolean
}

/** The Redis key of a queue's unavailable-wait counter: beside BullMQ's keys of the queue, so it shares their prefix and lifetime. */
const unavailableWaitsKey = (queues: Queues, queue: QueueName) => queues.get(queue).toKey('unavailable-waits')

/** Counts one wait of a job for an unreachable database (the worker's alert signal, read by /metrics). */
export async function recordUnavailableWait(queues: Queues, queue: QueueName): Promise<number> {
  return queues.connection.incr(unavailableWaitsKey(queues, queue))
}

export async function queueFigures(queues: Queues, names: readonly QueueName[] = QUEUE_NAMES): Promise<QueueFigures[]> {
  return Promise.all(
    names.map(async (queue) => {
      const q = queues.get(queue)
      const [raw, completed, failed, paused, unavailable] = await Promise.all([
        q.getJobCounts(...JOB_STATES),
        q.getMetrics('completed', 0, 0),
        q.getMetrics('failed', 0, 0),
        q.isPaused(),
        queues.connection.get(unavailableWaitsKey(queues, queue)),
      ])
      const counts = Object.fromEntries(JOB_STATES.map((s) => [s, raw[s] ?? 0])) as Record<JobState, number>
      return {
        queue,
        counts,
        processed: { completed: completed.meta.count, failed: failed.meta.count },
        waits: { unavailable: Number(unavailable ?? 0) },
        paused,
      }
    }),
  )
}
