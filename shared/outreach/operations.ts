/**
 * Outreach operations (contract §4.2, §8): sending one delivery (the `outreach` worker), the
 * sweep that re-queues deliveries whose job was lost (worker maintenance), and the endpoint and
 * delivery record that operators manage (`cli outreach`).
 */
import * as queries from '../../db/queries/outreach'
import { requireBusiness } from '../access/accounts'
import { JOBS, type JobDataHooksTable } from '../platform/jobs'
import { openSecret, sealSecret } from '../platform/secret-box'
import type { Services } from '../platform/services'
import { deliveryBodyText, endpointSecretContext, outreachBackoffMs, type DeliveryBody } from './delivery'
import type { OutreachDelivery, OutreachEndpoint } from './schemas'
import { sendSigned } from './send'
import { generateSigningSecret } from './signature'
import { deliveryView, endpointView } from './views'

/**
 * What one run of a delivery came to. `ended`: finished without an attempt, and no retry can
 * change that. `attempt-failed`: the attempt is recorded; `lastAttempt` says the delivery is
 * now failed, otherwise it waits for the next one.
 */
export type DeliveryOutcome =
  | { outcome: 'delivered'; deliveryId: string; statusCode: number; attempt: number }
  | { outcome: 'not-pending'; deliveryId: string; state: OutreachDelivery['state'] }
  | { outcome: 'gone'; deliveryId: string }
  | { outcome: 'ended'; deliveryId: string; state: 'skipped' | 'failed'; reason: string }
  | { outcome: 'attempt-failed'; deliveryId: string; reason: string; lastAttempt: boolean }

/** The queue's count of this delivery's runs: those already made, and how many it allows. */
export interface AttemptBudget {
  attemptsMade: number
  maxAttempts: number
}

/**
 * POSTs one delivery to its business's endpoint, signed, and records the attempt. 2xx →
 * delivered. Safe to run twice: only a `pending` delivery is sent.
 */
export async function deliverOutreach(deps: Pick<Services, 'config' | 'database'>, deliveryId: string, budget: AttemptBudget): Promise<DeliveryOutcome> {
  const { db } = deps.database
  const delivery = await queries.findOutreachDelivery(db, deliveryId)
  // Deleted with its business (cascade): nothing to send, nothing to retry.
  if (!delivery) return { outcome: 'gone', deliveryId }
  if (delivery.state !== 'pending') return { outcome: 'not-pending', deliveryId, state: delivery.state }

  const endpoint = await queries.findOutreachEndpoint(db, delivery.businessId)
  if (!endpoint?.enabled) {
    const reason = endpoint ? 'outreach endpoint disabled' : 'outreach endpoint removed'
    await queries.finishOutreachDelivery(db, deliveryId, 'skipped', reason)
    return { outcome: 'ended', deliveryId, state: 'skipped', reason }
  }
  let secret: string
  try {
    secret = openSecret(deps.config.appSecret, endpoint.secretEncrypted, endpointSecretContext(endpoint.businessId))
  } catch {
    // Only an operator can fix this (APP_SECRET changed since `outreach set`): retrying is useless.
    const reason = 'signing secret cannot be decrypted (APP_SECRET changed?); run outreach set again'
    await queries.finishOutreachDelivery(db, deliveryId, 'failed', reason)
    return { outcome: 'ended', deliveryId, state: 'failed', reason }
  }

  // The stored payload was built from DeliveryBody when the inquiry was accepted.
  const body = deliveryBodyText(delivery.payload as DeliveryBody)
  const { statusCode, latencyMs, error } = await sendSigned(endpoint.url, { deliveryId, secret, body }, deps.config.outreachTimeoutMs)

  if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
    const attempt = await queries.recordOutreachAttempt(db, deliveryId, { statusCode, latencyMs, error: null }, { state: 'delivered' })
    return { outcome: 'delivered', deliveryId, statusCode, attempt }
  }
  const reason = error ?? `endpoint answered HTTP ${statusCode}`
  const attemptsMade = budget.attemptsMade + 1
  const lastAttempt = attemptsMade >= budget.maxAttempts
  await queries.recordOutreachAttempt(
    db,
    deliveryId,
    { statusCode, latencyMs, error },
    lastAttempt
      ? { state: 'failed' }
      : {
          state: 'pending',
          nextAttemptAt: new Date(Date.now() + outreachBackoffMs(attemptsMade, deps.config.outreachBackoffBaseMs, deps.config.outreachBackoffMaxMs)),
        },
  )
  return { outcome: 'attempt-failed', deliveryId, reason, lastAttempt }
}

/** A due delivery younger than this may still be being enqueued (or promoted) normally: leave it. */
const SWEEP_MIN_AGE_MS = 60_000
const SWEEP_PAGE = 500
/** Bounds one run (one Redis round trip and a few hundred enqueues per page); the next run goes on. */
const SWEEP_MAX_PER_RUN = 20_000

/**
 * Maintenance task: a delivery committed by the API whose enqueue failed (Redis down at that
 * moment), or whose job Redis lost, is `pending` and due without a job. Queue it again; the job id
 * is the delivery id, so a delivery that does have its job is never doubled. A job that failed for
 * good while its delivery stayed pending (a crash between the two) marks the delivery failed.
 *
 * Fair across businesses: due deliveries are read in turns (each business's oldest first, then
 * every business's second, …) and queued with that turn as their BullMQ priority, so one
 * business's thousands of due deliveries neither keep another's out of a run nor sit ahead of it
 * in the queue; and a priority puts them behind the deliveries the API queues meanwhile.
 */
export async function sweepOutreachDeliveries(
  deps: Pick<Services, 'database' | 'queues' | 'logger'>,
  options: { minAgeMs?: number; pageSize?: number; maxPerRun?: number } = {},
): Promise<{ checked: number; requeued: number; failed: number }> {
  const { db } = deps.database
  const pageSize = options.pageSize ?? SWEEP_PAGE
  const maxPerRun = options.maxPerRun ?? SWEEP_MAX_PER_RUN
  const queue = deps.queues.get(JOBS.outreach.queue)
  let checked = 0
  let requeued = 0
  let failed = 0
  // Offsets over a ranking that requeued rows keep (they stay pending): a row that moves between
  // pages is at worst seen twice (harmless) or left to the next run.
  while (checked < maxPerRun) {
    const rows = await queries.listDuePendingDeliveries(db, options.minAgeMs ?? SWEEP_MIN_AGE_MS, {
      limit: Math.min(pageSize, maxPerRun - checked),
      offset: checked,
    })
    if (rows.length === 0) break
    const jobIds = rows.map(({ id }) => JOBS.outreach.jobId({ deliveryId: id }))
    const presence = await deps.queues.presenceOf(JOBS.outreach.queue, jobIds)
    for (let i = 0; i < rows.length; i++) {
      const { id, rank } = rows[i]
      const state = presence.get(jobIds[i])
      if (state === 'missing') {
        await deps.queues.enqueue('outreach', { deliveryId: id }, { priority: Math.min(rank, MAX_PRIORITY) })
        requeued++
      } else if (state === 'failed') {
        const job = await queue.getJob(jobIds[i])
        await queries.finishOutreachDelivery(db, id, 'failed', job?.failedReason || 'job failed')
        failed++
      }
    }
    checked += rows.length
    if (rows.length < pageSize) break
  }
  if (requeued || failed) deps.logger.info('outreach sweep', { checked, requeued, failed })
  return { checked, requeued, failed }
}

/** BullMQ's largest priority. */
const MAX_PRIORITY = 2 ** 21

/**
 * What exhaustion means for the outreach queue (docs/operations.md "Exhausted jobs"): a delivery still
 * pending when its job fails for good (the failure came before the attempt was recorded) is
 * failed with the job's reason; a retry makes a failed or skipped delivery pending again, so the
 * job really sends it; a drop leaves it as it is.
 */
export const OUTREACH_JOB_HOOKS: JobDataHooksTable = {
  outreach: {
    exhausted: (deps, { deliveryId }, failure) => queries.finishOutreachDelivery(deps.database.db, deliveryId, 'failed', failure.reason),
    reopen: async (deps, { deliveryId }) => void (await queries.reopenOutreachDelivery(deps.database.db, deliveryId)),
    abandon: async () => {},
  },
}

/**
 * Sets the business's endpoint with a new signing secret, enabled. On an existing endpoint this
 * is a rotation: the previous secret signs nothing any more. The secret is stored only sealed
 * with APP_SECRET; this answer is the one place it is seen.
 */
export async function setOutreachEndpoint(
  deps: Pick<Services, 'config' | 'database'>,
  businessId: number,
  url: string,
): Promise<{ endpoint: OutreachEndpoint; secret: string; rotated: boolean }> {
  await requireBusiness(deps, businessId)
  const secret = generateSigningSecret()
  const sealed = sealSecret(deps.config.appSecret, secret, endpointSecretContext(businessId))
  const { row, created } = await queries.upsertOutreachEndpoint(deps.database.db, businessId, url, sealed)
  return { endpoint: endpointView(row), secret, rotated: !created }
}

/** null: the business has no endpoint. */
export async function showOutreachEndpoint(deps: Pick<Services, 'database'>, businessId: number): Promise<OutreachEndpoint | null> {
  await requireBusiness(deps, businessId)
  const row = await queries.findOutreachEndpoint(deps.database.db, businessId)
  return row && endpointView(row)
}

/** Pending deliveries of a disabled endpoint end as skipped when their turn comes. null: no endpoint. */
export async function disableOutreachEndpoint(deps: Pick<Services, 'database'>, businessId: number): Promise<OutreachEndpoint | null> {
  await requireBusiness(deps, businessId)
  const row = await queries.disableOutreachEndpoint(deps.database.db, businessId)
  return row && endpointView(row)
}

/** The newest deliveries of the business, each with its attempt log. */
export async function listOutreachDeliveries(deps: Pick<Services, 'database'>, businessId: number, limit: number): Promise<OutreachDelivery[]> {
  await requireBusiness(deps, businessId)
  return (await queries.listOutreachDeliveries(deps.database.db, businessId, limit)).map(deliveryView)
}
