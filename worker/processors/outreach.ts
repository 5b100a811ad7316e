/**
 * outreach (contract §4.2, §8; architecture.md "Outreach signature"): POSTs one delivery to its
 * business's endpoint, signed with HMAC-SHA256 over "<timestamp>.<body>", and records the
 * attempt. 2xx → delivered. Anything else (status, timeout, connection error) → throw, so
 * BullMQ retries with the 'outreach' backoff (queue-config.ts) until the attempts run out; the
 * last failure marks the delivery failed. A disabled or removed endpoint ends the delivery as
 * skipped (UnrecoverableError). Safe to run twice: only a `pending` delivery is sent.
 */
import { UnrecoverableError, type Job } from 'bullmq'
import { Value } from '@sinclair/typebox/value'
import {
  findOutreachDelivery, findOutreachEndpoint, finishOutreachDelivery, listStalePendingDeliveries, recordOutreachAttempt,
} from '../../db/queries/outreach'
import { JOBS, OutreachPayload } from '../../shared/platform/jobs'
import { deliveryBodyText, endpointSecretContext, outreachBackoffMs, type DeliveryBody } from '../../shared/outreach/delivery'
import { signatureHeader } from '../../shared/outreach/signature'
import { openSecret } from '../../shared/platform/secret-box'
import type { WorkerDeps } from '../deps'

export const OUTREACH_USER_AGENT = 'property-lead-api-outreach/1.0'

export type OutreachOutcome =
  | { outcome: 'delivered'; deliveryId: string; statusCode: number; attempt: number }
  | { outcome: 'not-pending'; deliveryId: string; state: string }
  | { outcome: 'gone'; deliveryId: string }

export async function processOutreach(deps: Pick<WorkerDeps, 'config' | 'database' | 'queues' | 'logger'>, job: Job): Promise<OutreachOutcome> {
  if (!Value.Check(OutreachPayload, job.data)) throw new UnrecoverableError(`invalid outreach payload: ${JSON.stringify(job.data)}`)
  const { deliveryId } = job.data
  const { db } = deps.database
  const delivery = await findOutreachDelivery(db, deliveryId)
  // Deleted with its business (cascade): nothing to send, nothing to retry.
  if (!delivery) return { outcome: 'gone', deliveryId }
  if (delivery.state !== 'pending') return { outcome: 'not-pending', deliveryId, state: delivery.state }

  const endpoint = await findOutreachEndpoint(db, delivery.businessId)
  if (!endpoint || !endpoint.enabled) {
    const reason = endpoint ? 'outreach endpoint disabled' : 'outreach endpoint removed'
    await finishOutreachDelivery(db, deliveryId, 'skipped', reason)
    throw new UnrecoverableError(reason)
  }
  let secret: string
  try {
    secret = openSecret(deps.config.appSecret, endpoint.secretEncrypted, endpointSecretContext(endpoint.businessId))
  } catch {
    // Only an operator can fix this (APP_SECRET changed since `outreach set`): retrying is useless.
    const reason = 'signing secret cannot be decrypted (APP_SECRET changed?); run outreach set again'
    await finishOutreachDelivery(db, deliveryId, 'failed', reason)
    throw new UnrecoverableError(reason)
  }

  const body = deliveryBodyText(delivery.payload as DeliveryBody)
  const timestamp = Math.floor(Date.now() / 1000)
  const timeoutMs = deps.config.outreachTimeoutMs
  const started = performance.now()
  let statusCode: number | null = null
  let error: string | null = null
  try {
    const res = await fetch(endpoint.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': OUTREACH_USER_AGENT,
        'x-webhook-id': deliveryId,
        'x-webhook-timestamp': String(timestamp),
        'x-webhook-signature': signatureHeader(secret, timestamp, body),
      },
      body,
      // A redirect is not a delivery: the signed body must reach the configured URL itself.
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    })
    statusCode = res.status
    await res.body?.cancel().catch(() => {})
  } catch (e) {
    error = describeFetchError(e, timeoutMs)
  }
  const latencyMs = Math.round(performance.now() - started)

  if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
    const attempt = await recordOutreachAttempt(db, deliveryId, { statusCode, latencyMs, error: null }, { state: 'delivered' })
    return { outcome: 'delivered', deliveryId, statusCode, attempt }
  }
  const reason = error ?? `endpoint answered HTTP ${statusCode}`
  const attemptsMade = job.attemptsMade + 1
  const last = attemptsMade >= (job.opts.attempts ?? 1)
  await recordOutreachAttempt(
    db,
    deliveryId,
    { statusCode, latencyMs, error },
    last ? { state: 'failed' } : { state: 'pending', nextAttemptAt: new Date(Date.now() + outreachBackoffMs(attemptsMade, deps.config.outreachBackoffBaseMs, deps.config.outreachBackoffMaxMs)) },
  )
  throw new Error(last ? `${reason}; no attempts left` : reason)
}

function describeFetchError(e: unknown, timeoutMs: number): string {
  const err = e as { name?: string; code?: string; message?: string }
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return `timeout after ${timeoutMs} ms`
  const text = [err?.code, err?.message].filter(Boolean).join(': ') || String(e)
  return text.slice(0, 500)
}

/** A pending delivery younger than this may still be being enqueued by the API: leave it. */
const SWEEP_MIN_AGE_MS = 60_000
const SWEEP_BATCH = 500

/**
 * Maintenance task: a delivery committed by the API whose enqueue failed (Redis down at that
 * moment) is `pending` without a job. Queue it again; the job id is the delivery id, so a
 * delivery that does have its job is never doubled. A job that failed for good while its
 * delivery stayed pending (a crash between the two) marks the delivery failed.
 */
export async function sweepOutreachDeliveries(deps: Pick<WorkerDeps, 'config' | 'database' | 'queues' | 'logger'>, options: { minAgeMs?: number; limit?: number } = {}): Promise<{ checked: number; requeued: number; failed: number }> {
  const { db } = deps.database
  const rows = await listStalePendingDeliveries(db, options.minAgeMs ?? SWEEP_MIN_AGE_MS, options.limit ?? SWEEP_BATCH)
  const queue = deps.queues.get(JOBS.outreach.queue)
  let requeued = 0
  let failed = 0
  for (const { id } of rows) {
    const job = await queue.getJob(JOBS.outreach.jobId({ deliveryId: id })!)
    if (!job) {
      await deps.queues.enqueue('outreach', { deliveryId: id })
      requeued++
    } else if ((await job.getState()) === 'failed') {
      await finishOutreachDelivery(db, id, 'failed', job.failedReason || 'job failed')
      failed++
    }
  }
  if (requeued || failed) deps.logger.info('outreach sweep', { checked: rows.length, requeued, failed })
  return { checked: rows.length, requeued, failed }
}
