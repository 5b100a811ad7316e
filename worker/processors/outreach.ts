/**
 * outreach (contract §4.2, §8): runs one delivery (shared/outreach/operations.ts) and turns what
 * it came to into BullMQ's terms. A failed attempt throws, so BullMQ retries with the 'outreach'
 * backoff (queue-config.ts) until the attempts run out. A delivery that ended without an attempt
 * is not retried: `skipped` (endpoint disabled or removed) is an outcome like `delivered`, so the
 * job completes; `failed` (the secret no longer opens) throws UnrecoverableError and the job is
 * kept for an operator, who runs `outreach set` and then `cli queues retry`.
 */
import { UnrecoverableError, type Job } from 'bullmq'
import { Value } from '@sinclair/typebox/value'
import { OutreachPayload } from '../../shared/platform/jobs'
import { deliverOutreach, type DeliveryOutcome } from '../../shared/outreach/operations'
import type { WorkerDeps } from '../deps'

// worker/maintenance.ts imports the sweep from here.

export type OutreachOutcome =
  | Extract<DeliveryOutcome, { outcome: 'delivered' | 'not-pending' | 'gone' }>
  | { outcome: 'ended'; deliveryId: string; state: 'skipped'; reason: string }

export async function processOutreach(deps: Pick<WorkerDeps, 'config' | 'database'>, job: Job): Promise<OutreachOutcome> {
  if (!Value.Check(OutreachPayload, job.data)) throw new UnrecoverableError(`invalid outreach payload: ${JSON.stringify(job.data)}`)
  const result = await deliverOutreach(deps, job.data.deliveryId, { attemptsMade: job.attemptsMade, maxAttempts: job.opts.attempts ?? 1 })
  switch (result.outcome) {
    case 'ended':
      // Failed jobs wait for an operator (docs/operations.md "Exhausted jobs"); a skip needs none.
      if (result.state === 'skipped') return { ...result, state: 'skipped' }
      throw new UnrecoverableError(result.reason)
    case 'attempt-failed':
      throw new Error(result.lastAttempt ? `${result.reason}; no attempts left` : result.reason)
    default:
      return result
  }
}
