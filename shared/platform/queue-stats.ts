/**
 * Per-queue figures read from Redis (so every replica and the CLI see the same numbers): job
 * counts by state, and finished-job totals from BullMQ's metrics, which every worker records
 * (worker/runtime.ts sets `metrics`). Used by `/metrics` and `bun run cli queues`.
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
  paused: boolean
}

export async function queueFigures(queues: Queues, names: readonly QueueName[] = QUEUE_NAMES): Promise<QueueFigures[]> {
  return Promise.all(
    names.map(async (queue) => {
      const q = queues.get(queue)
      const [raw, completed, failed, paused] = await Promise.all([
        q.getJobCounts(...JOB_STATES),
        q.getMetrics('completed', 0, 0),
        q.getMetrics('failed', 0, 0),
        q.isPaused(),
      ])
      const counts = Object.fromEntries(JOB_STATES.map((s) => [s, raw[s] ?? 0])) as Record<JobState, number>
      return { queue, counts, processed: { completed: completed.meta.count, failed: failed.meta.count }, paused }
    }),
  )
}
