/**
 * The one rule for every queue (docs/operations.md "Exhausted jobs"): a job that exhausts its retries (or
 * fails permanently) is kept in the failed set until an operator retries or drops it, and the
 * data it worked on becomes `failed` with a reason, never `processing` for ever. And a job whose
 * queue waits out an unreachable database (lead-ingest) goes back to the delayed set without
 * using an attempt, counted in Redis for /metrics and logged at error level.
 */
import { DelayedError, UnrecoverableError, type Job } from 'bullmq'
import { MEDIA_JOB_HOOKS } from '../shared/media/operations'
import { OUTREACH_JOB_HOOKS } from '../shared/outreach/operations'
import { dataHooksOf, type JobDataHooksTable, type JobKind } from '../shared/platform/jobs'
import type { Logger } from '../shared/platform/logger'
import type { QueueName } from '../shared/platform/queue-names'
import { recordUnavailableWait } from '../shared/platform/queue-stats'
import { isUnavailableError, unavailableCause } from '../shared/platform/unavailable'
import type { WorkerDeps } from './deps'
import type { Processor } from './processors'
import { QUEUE_UNAVAILABLE_POLICY, unavailableRetryDelayMs } from './queue-config'

const JOB_DATA_HOOKS: JobDataHooksTable = { ...MEDIA_JOB_HOOKS, ...OUTREACH_JOB_HOOKS }

/** BullMQ's `failed` event fires after every failed attempt; this is the one after which nothing retries. */
export function isExhausted(job: Job, error: Error): boolean {
  return error instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1)
}

/** Marks the job's data failed with its reason. If PostgreSQL is down now, the media and outreach sweeps do it later. */
export async function recordExhaustedJob(deps: Pick<WorkerDeps, 'database'>, queue: QueueName, job: Job): Promise<void> {
  const hooks = dataHooksOf(JOB_DATA_HOOKS, queue as JobKind, job.data)
  await hooks?.exhausted(deps, { reason: job.failedReason || 'job failed', attemptsMade: job.attemptsMade })
}

/** How often, at most, the "still unreachable" line is logged per queue and process during an outage. */
const ALERT_EVERY_MS = 30_000

/**
 * Wraps a queue's processor with its unavailability policy (worker/queue-config.ts). For `wait`:
 * an error that means the database is unreachable (shared/platform/unavailable.ts) moves the job
 * to the delayed set for unavailableRetryDelayMs (from the job's own backoff delay) and throws
 * BullMQ's DelayedError, which uses no attempt: the job never exhausts during an outage.
 * Any other error fails the attempt as usual (bounded; an invalid payload fails at once).
 */
export function withUnavailablePolicy(queue: QueueName, processor: Processor, deps: Pick<WorkerDeps, 'queues'>, logger: Logger): Processor {
  if (QUEUE_UNAVAILABLE_POLICY[queue] !== 'wait') return processor
  let outageSince: number | undefined
  let lastAlert = 0
  let waitsSinceAlert = 0
  return async (job, token) => {
    let result: unknown
    try {
      result = await processor(job, token)
    } catch (error) {
      if (!token || !isUnavailableError(error)) throw error
      // attemptsStarted counts every run, attemptsMade only failed ones: the difference is how
      // many times this job has already waited, so its wait grows across the outage.
      const waits = Math.max(1, job.attemptsStarted - job.attemptsMade)
      const delay = unavailableRetryDelayMs(waits, backoffDelayOf(job))
      await recordUnavailableWait(deps.queues, queue).catch(() => {})
      waitsSinceAlert++
      const now = Date.now()
      if (outageSince === undefined || now - lastAlert >= ALERT_EVERY_MS) {
        logger.error(
          outageSince === undefined ? 'PostgreSQL unreachable: jobs wait for it, keeping their attempts' : 'PostgreSQL still unreachable: jobs keep waiting',
          {
            ...unavailableCause(error),
            job_id: job.id,
            retry_in_ms: delay,
            waits: waitsSinceAlert,
            outage_ms: outageSince === undefined ? 0 : now - outageSince,
          },
        )
        outageSince ??= now
        lastAlert = now
        waitsSinceAlert = 0
      }
      await job.moveToDelayed(now + delay, token)
      throw new DelayedError()
    }
    if (outageSince !== undefined) {
      logger.warn('PostgreSQL reachable again: waiting jobs resume', { outage_ms: Date.now() - outageSince })
      outageSince = undefined
    }
    return result
  }
}

function backoffDelayOf(job: Job): number {
  const backoff = job.opts.backoff
  const delay = typeof backoff === 'number' ? backoff : backoff?.delay
  return delay && delay > 0 ? delay : 1000
}
