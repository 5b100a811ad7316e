/**
 * The delivery engine of webhook endpoints (contract §10.2). One run of an endpoint's runner (a
 * `webhook-delivery` job) sends that endpoint's due deliveries, `WEBHOOK_ENDPOINT_CONCURRENCY`
 * at a time, claiming them from PostgreSQL in small leased batches ahead of the senders, and
 * records the attempts in batches; after a few seconds it makes way for other endpoints (and
 * queues itself again). A slow or failing endpoint thus holds one runner, never another
 * business's deliveries (fairness), and retries are rows due later, not jobs holding a slot.
 *
 * Each attempt: a Standard Webhooks POST of the Event object through the SSRF-safe fetch (the
 * URL's addresses checked again, redirects not followed, 2xx within WEBHOOK_TIMEOUT_MS is a
 * success). A 410 disables the endpoint at once; an endpoint failing continuously for
 * WEBHOOK_DISABLE_AFTER_MS is disabled with its reason; a delivery whose retry window (the same
 * bound, counted from its first attempt as the endpoint's failing run is) is over is `failed`.
 * Otherwise the next attempt waits base·2^(n−1), capped at 6 h.
 */
import * as queries from '../../db/queries/webhooks'
import { findEventsByIds, type EventRecord } from '../../db/queries/events'
import { eventView } from '../events/operations'
import { canRead } from '../events/visibility'
import { outreachBackoffMs } from '../outreach/delivery'
import { FetchError, safeFetch, WEBHOOK_LIMITS, type ResolveHost } from '../platform/fetch'
import type { Services } from '../platform/services'
import { plainJson } from '../platform/plain-json'
import { openSecret } from '../platform/secret-box'
import { webhookHeaders } from './signature'
import { recordDeliveryStats, type AttemptOutcomeLabel } from './stats'
import { wakeEndpoints } from './wake'

export const WEBHOOK_USER_AGENT = 'property-lead-api-webhooks/1.1'
/** Contract §10.2: the first retry waits WEBHOOK_BACKOFF_BASE_MS, doubling, capped at 6 h. */
export const WEBHOOK_BACKOFF_MAX_MS = 6 * 3600_000
/** One run's share of a worker slot before it makes way for other endpoints. */
export const RUN_BUDGET_MS = 5000
/** Attempts recorded per statement. */
const FLUSH_EVERY = 64

/** The same schedule as outreach (one backoff rule for both deliveries): base·2^(n−1), capped. */
export const webhookBackoffMs = (attemptsMade: number, baseMs: number) => outreachBackoffMs(attemptsMade, baseMs, WEBHOOK_BACKOFF_MAX_MS)

/** The secret box of a webhook endpoint opens only for its business (AAD). */
export const webhookSecretContext = (businessId: number) => `webhook-endpoint:${businessId}`

/** How long a claimed delivery stays leased to its runner: past it, another runner may take it. */
export const claimLeaseMs = (timeoutMs: number) => 2 * timeoutMs + 5000

export interface RunResult {
  endpointId: number
  attempted: number
  delivered: number
  /** Why the run ended. */
  ended: 'drained' | 'budget' | 'stopping' | 'disabled' | 'not-enabled'
}

export interface RunOptions {
  budgetMs?: number
  /** The worker is shutting down: claim nothing more, finish what was claimed. */
  shouldStop?: () => boolean
  resolve?: ResolveHost
}

type Deps = Pick<Services, 'config' | 'database' | 'queues' | 'logger'>

interface Item {
  delivery: queries.ClaimedDelivery
  event: EventRecord
}

/** The secrets that sign right now: the current one, and the previous one during the 24 h after a rotation. */
export function signingSecrets(appSecret: string, endpoint: queries.WebhookEndpointRow, now = Date.now()): string[] {
  const context = webhookSecretContext(endpoint.businessId)
  const secrets = [openSecret(appSecret, endpoint.secretSealed, context)]
  if (endpoint.previousSecretSealed && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt.getTime() > now) {
    secrets.push(openSecret(appSecret, endpoint.previousSecretSealed, context))
  }
  return secrets
}

/** Worker processes shutting down (keyed by their database pool): their runs claim nothing more. */
const stopping = new WeakSet<object>()
/**
 * Shutdown: running runs stop claiming, drop what they claimed but did not send (its lease ends
 * and another runner takes it) and end once their requests in flight are answered.
 */
export function stopWebhookRunners(deps: Pick<Services, 'database'>): void {
  stopping.add(deps.database)
}

export async function runEndpoint(deps: Deps, endpointId: number, options: RunOptions = {}): Promise<RunResult> {
  const shouldStop = () => stopping.has(deps.database) || options.shouldStop?.() === true
  const { db } = deps.database
  const cfg = deps.config.webhooks
  const result: RunResult = { endpointId, attempted: 0, delivered: 0, ended: 'drained' }
  const endpoint = await queries.findEndpointById(db, endpointId)
  if (endpoint?.status !== 'enabled') return { ...result, ended: 'not-enabled' }
  let secrets: string[]
  try {
    secrets = signingSecrets(deps.config.appSecret, endpoint)
  } catch {
    // Only a rotation fixes this (APP_SECRET changed since the secret was made): retrying is useless.
    await queries.disableEndpoint(db, endpointId, 'the signing secret cannot be decrypted (APP_SECRET changed?); rotate the secret and enable the endpoint')
    return { ...result, ended: 'disabled' }
  }

  const concurrency = cfg.endpointConcurrency
  const claimSize = Math.min(200, Math.max(8, concurrency * 2))
  const leaseMs = claimLeaseMs(cfg.timeoutMs)
  const deadline = Date.now() + (options.budgetMs ?? RUN_BUDGET_MS)
  const buffer: Item[] = []
  let drained = false
  let disabled = false
  let refilling: Promise<void> | null = null
  let pending: queries.AttemptOutcome[] = []
  let labels: { outcome: AttemptOutcomeLabel; latencyMs: number }[] = []
  let flushing: Promise<void> = Promise.resolve()
  let lastError: unknown

  const canClaim = () => !drained && !disabled && !shouldStop() && Date.now() < deadline

  const refill = async () => {
    const claimed = await queries.claimDueDeliveries(db, endpointId, claimSize, leaseMs)
    if (claimed.length === 0) {
      drained = true
      return
    }
    const events = await findEventsByIds(db, claimed.map((c) => c.eventId))
    const unreadable: string[] = []
    // An event deleted meanwhile (retention) took its delivery with it.
    for (const delivery of claimed) {
      const event = events.get(delivery.eventId)
      if (!event) continue
      // The relay makes no such delivery; one made before the endpoint's subscription narrowed
      // (or by an earlier version) is never sent (contract §15 §10.1).
      if (canRead(event.type, endpoint.eventScopes)) buffer.push({ delivery, event })
      else unreadable.push(delivery.id)
    }
    await queries.cancelPendingDeliveries(db, unreadable)
  }
  const startRefill = () => (refilling ??= refill().finally(() => (refilling = null)))

  const next = async (): Promise<Item | undefined> => {
    for (;;) {
      if (disabled || shouldStop()) return undefined
      const item = buffer.shift()
      if (item) {
        // Claim ahead of the senders, so they never wait on PostgreSQL between deliveries.
        if (buffer.length < concurrency && canClaim()) void startRefill().catch((e) => (lastError = e))
        return item
      }
      if (refilling) {
        await refilling.catch((e) => (lastError = e))
        if (lastError) return undefined
        continue
      }
      if (!canClaim() || lastError) return undefined
      await startRefill().catch((e) => (lastError = e))
      if (lastError) return undefined
    }
  }

  const flush = () => {
    const batch = pending
    const stats = labels
    pending = []
    labels = []
    flushing = flushing.then(async () => {
      if (batch.length === 0) return
      await queries.recordAttempts(db, batch)
      await recordDeliveryStats(deps.queues.connection, deps.queues.prefix, stats).catch(() => {})
      const gone = batch.some((o) => o.statusCode === 410)
      if (gone) {
        disabled = true
        await queries.disableEndpoint(db, endpointId, 'the endpoint answered 410 Gone')
        return
      }
      const lastSuccess = batch.findLastIndex((o) => o.state === 'delivered')
      const failingSince = await queries.setEndpointHealth(
        db,
        endpointId,
        lastSuccess === batch.length - 1 ? { kind: 'ok' } : { kind: 'failing', since: batch[lastSuccess + 1].attemptedAt, afterSuccess: lastSuccess >= 0 },
      )
      if (failingSince && Date.now() - failingSince.getTime() >= cfg.disableAfterMs) {
        disabled = true
        await queries.disableEndpoint(db, endpointId, `failing continuously since ${failingSince.toISOString()} (every attempt for ${Math.round(cfg.disableAfterMs / 1000)} s failed)`)
      }
    }).catch((e) => {
      lastError = e
    })
    return flushing
  }

  const attempt = async ({ delivery, event }: Item): Promise<void> => {
    const body = plainJson(eventView(event))
    const headers = {
      'content-type': 'application/json',
      'user-agent': WEBHOOK_USER_AGENT,
      ...webhookHeaders(secrets, event.id, Math.floor(Date.now() / 1000), body),
    }
    const attemptedAt = new Date()
    const started = performance.now()
    let statusCode: number | null = null
    let error: string | null = null
    try {
      const res = await safeFetch(endpoint.url, { ...WEBHOOK_LIMITS, timeoutMs: cfg.timeoutMs, readBody: false, allowHosts: cfg.allowHosts, resolve: options.resolve, method: 'POST', headers, body })
      statusCode = res.status
      if (statusCode < 200 || statusCode > 299) {
        error = statusCode >= 300 && statusCode < 400 ? `the endpoint answered HTTP ${statusCode} (redirects are not followed)` : `the endpoint answered HTTP ${statusCode}`
      }
    } catch (e) {
      error = e instanceof FetchError ? e.message.slice(0, 500) : `request failed: ${String((e as Error)?.message ?? e).slice(0, 480)}`
    }
    const latencyMs = Math.round(performance.now() - started)
    result.attempted++
    if (error === null) {
      result.delivered++
      pending.push({ deliveryId: delivery.id, endpointId, statusCode, error, latencyMs, attemptedAt, state: 'delivered', nextAttemptAt: null })
      labels.push({ outcome: 'delivered', latencyMs })
    } else {
      const attemptsMade = delivery.attempts + 1
      const windowOver = Date.now() - delivery.windowStart.getTime() >= cfg.disableAfterMs
      const nextAttemptAt = windowOver ? null : new Date(Date.now() + webhookBackoffMs(attemptsMade, cfg.backoffBaseMs))
      pending.push({ deliveryId: delivery.id, endpointId, statusCode, error, latencyMs, attemptedAt, state: windowOver ? 'failed' : 'pending', nextAttemptAt })
      labels.push({ outcome: windowOver ? 'failed' : 'retrying', latencyMs })
    }
    if (pending.length >= FLUSH_EVERY || statusCode === 410) await flush()
  }

  const sender = async () => {
    for (let item = await next(); item; item = await next()) await attempt(item)
  }
  await Promise.all(Array.from({ length: concurrency }, sender))
  await flush()
  if (lastError) throw lastError

  if (disabled) result.ended = 'disabled'
  else if (shouldStop()) result.ended = 'stopping'
  else if (!drained) {
    result.ended = 'budget'
    // More is due: run again after this run (BullMQ keeps one next run while this one is active).
    await wakeEndpoints(deps, [endpointId]).catch(() => {})
  }
  return result
}
