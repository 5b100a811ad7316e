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

/**
 * One run of the endpoint's runner: checks the endpoint can be sent to, sends what is due within
 * the run's budget, and says how the run ended.
 */
export async function runEndpoint(deps: Deps, endpointId: number, options: RunOptions = {}): Promise<RunResult> {
  const endpoint = await queries.findEndpointById(deps.database.db, endpointId)
  if (endpoint?.status !== 'enabled') return { endpointId, attempted: 0, delivered: 0, ended: 'not-enabled' }
  const secrets = await signingSecretsOrDisable(deps, endpoint)
  if (!secrets) return { endpointId, attempted: 0, delivered: 0, ended: 'disabled' }
  const run = new EndpointRun(deps, endpoint, secrets, options)
  await run.sendDue()
  return run.end()
}

/** The endpoint's signing secrets; null, with the endpoint disabled, when they cannot be opened. */
async function signingSecretsOrDisable(deps: Deps, endpoint: queries.WebhookEndpointRow): Promise<string[] | null> {
  try {
    return signingSecrets(deps.config.appSecret, endpoint)
  } catch {
    // Only a rotation fixes this (APP_SECRET changed since the secret was made): retrying is useless.
    await queries.disableEndpoint(
      deps.database.db,
      endpoint.id,
      'the signing secret cannot be decrypted (APP_SECRET changed?); rotate the secret and enable the endpoint',
    )
    return null
  }
}

/** What one POST of an event got: the status (null when no answer came) and why it failed (null on success). */
type Sent = Pick<queries.AttemptOutcome, 'statusCode' | 'error' | 'latencyMs' | 'attemptedAt'>

/** A Standard Webhooks POST of the event through the SSRF-safe fetch; never throws. */
async function postEvent(
  endpoint: queries.WebhookEndpointRow,
  secrets: string[],
  event: EventRecord,
  cfg: Deps['config']['webhooks'],
  resolve?: ResolveHost,
): Promise<Sent> {
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
    const res = await safeFetch(endpoint.url, {
      ...WEBHOOK_LIMITS,
      timeoutMs: cfg.timeoutMs,
      readBody: false,
      allowHosts: cfg.allowHosts,
      resolve,
      method: 'POST',
      headers,
      body,
    })
    statusCode = res.status
    if (statusCode < 200 || statusCode > 299) {
      error =
        statusCode >= 300 && statusCode < 400
          ? `the endpoint answered HTTP ${statusCode} (redirects are not followed)`
          : `the endpoint answered HTTP ${statusCode}`
    }
  } catch (e) {
    error = e instanceof FetchError ? e.message.slice(0, 500) : `request failed: ${String((e as Error)?.message ?? e).slice(0, 480)}`
  }
  return { statusCode, error, latencyMs: Math.round(performance.now() - started), attemptedAt }
}

/** The attempt's row: delivered; or due again after the backoff; or `failed` once its retry window is over. */
function attemptOutcome(
  endpointId: number,
  delivery: queries.ClaimedDelivery,
  sent: Sent,
  cfg: Deps['config']['webhooks'],
): { outcome: queries.AttemptOutcome; label: AttemptOutcomeLabel } {
  const attempt = {
    deliveryId: delivery.id,
    endpointId,
    statusCode: sent.statusCode,
    error: sent.error,
    latencyMs: sent.latencyMs,
    attemptedAt: sent.attemptedAt,
  }
  if (sent.error === null) return { outcome: { ...attempt, state: 'delivered', nextAttemptAt: null }, label: 'delivered' }
  const windowOver = Date.now() - delivery.windowStart.getTime() >= cfg.disableAfterMs
  const nextAttemptAt = windowOver ? null : new Date(Date.now() + webhookBackoffMs(delivery.attempts + 1, cfg.backoffBaseMs))
  return { outcome: { ...attempt, state: windowOver ? 'failed' : 'pending', nextAttemptAt }, label: windowOver ? 'failed' : 'retrying' }
}

/** The endpoint's health after a batch of attempts in order: ok when the last one succeeded, else failing since the first failure after the last success. */
function healthAfter(batch: readonly queries.AttemptOutcome[]): Parameters<typeof queries.setEndpointHealth>[2] {
  const lastSuccess = batch.findLastIndex((o) => o.state === 'delivered')
  return lastSuccess === batch.length - 1 ? { kind: 'ok' } : { kind: 'failing', since: batch[lastSuccess + 1].attemptedAt, afterSuccess: lastSuccess >= 0 }
}

/**
 * The state of one run: deliveries claimed ahead of the senders (`buffer`, at most one claim in
 * flight), attempts waiting to be recorded (`outcomes`, written in order by one chain of flushes),
 * and the first failure of PostgreSQL, which ends the run and is thrown at its end.
 */
class EndpointRun {
  private readonly result: RunResult
  private readonly cfg: Deps['config']['webhooks']
  private readonly claimSize: number
  private readonly leaseMs: number
  private readonly deadline: number
  private readonly buffer: Item[] = []
  private claiming: Promise<void> | null = null
  private drained = false
  private disabled = false
  private outcomes: queries.AttemptOutcome[] = []
  private labels: { outcome: AttemptOutcomeLabel; latencyMs: number }[] = []
  private flushing: Promise<void> = Promise.resolve()
  private failure: unknown

  constructor(
    private readonly deps: Deps,
    private readonly endpoint: queries.WebhookEndpointRow,
    private readonly secrets: string[],
    private readonly options: RunOptions,
  ) {
    this.result = { endpointId: endpoint.id, attempted: 0, delivered: 0, ended: 'drained' }
    this.cfg = deps.config.webhooks
    this.claimSize = Math.min(200, Math.max(8, this.cfg.endpointConcurrency * 2))
    this.leaseMs = claimLeaseMs(this.cfg.timeoutMs)
    this.deadline = Date.now() + (options.budgetMs ?? RUN_BUDGET_MS)
  }

  /** `endpointConcurrency` senders take deliveries until none is left to take; then the last attempts are recorded. */
  async sendDue(): Promise<void> {
    const sender = async () => {
      for (let item = await this.next(); item; item = await this.next()) await this.attempt(item)
    }
    await Promise.all(Array.from({ length: this.cfg.endpointConcurrency }, sender))
    await this.flush()
    if (this.failure) throw this.failure
  }

  /** How the run ended; with more due, the runner is woken to run again right after this run. */
  async end(): Promise<RunResult> {
    if (this.disabled) this.result.ended = 'disabled'
    else if (this.stopping()) this.result.ended = 'stopping'
    else if (!this.drained) {
      this.result.ended = 'budget'
      // More is due: run again after this run (BullMQ keeps one next run while this one is active).
      await wakeEndpoints(this.deps, [this.endpoint.id]).catch(() => {})
    }
    return this.result
  }

  private stopping(): boolean {
    return stopping.has(this.deps.database) || this.options.shouldStop?.() === true
  }

  private canClaim(): boolean {
    return !this.drained && !this.disabled && !this.stopping() && Date.now() < this.deadline
  }

  /** The next delivery to send; undefined when the run is over for the senders. */
  private async next(): Promise<Item | undefined> {
    for (;;) {
      if (this.disabled || this.stopping()) return undefined
      const item = this.buffer.shift()
      if (item) {
        // Claim ahead of the senders, so they never wait on PostgreSQL between deliveries.
        if (this.buffer.length < this.cfg.endpointConcurrency && this.canClaim()) void this.startClaim().catch(this.remember)
        return item
      }
      if (this.claiming) {
        await this.claiming.catch(this.remember)
        if (this.failure) return undefined
        continue
      }
      if (!this.canClaim() || this.failure) return undefined
      await this.startClaim().catch(this.remember)
      if (this.failure) return undefined
    }
  }

  /** The claim in flight, or a new one: at most one at a time. */
  private startClaim(): Promise<void> {
    this.claiming ??= this.claim().finally(() => {
      this.claiming = null
    })
    return this.claiming
  }

  /** Keeps a failure of PostgreSQL (the latest one): the senders stop and the run throws it at its end. */
  private readonly remember = (error: unknown): void => {
    this.failure = error
  }

  /** Leases the next due deliveries with their events; those the endpoint may not be sent are cancelled. */
  private async claim(): Promise<void> {
    const { db } = this.deps.database
    const claimed = await queries.claimDueDeliveries(db, this.endpoint.id, this.claimSize, this.leaseMs)
    if (claimed.length === 0) {
      this.drained = true
      return
    }
    const events = await findEventsByIds(
      db,
      claimed.map((c) => c.eventId),
    )
    const unreadable: string[] = []
    // An event deleted meanwhile (retention) took its delivery with it.
    for (const delivery of claimed) {
      const event = events.get(delivery.eventId)
      if (!event) continue
      // The relay makes no such delivery; one made before the endpoint's subscription narrowed
      // (or by an earlier version) is never sent (contract §15 §10.1).
      if (canRead(event.type, this.endpoint.eventScopes)) this.buffer.push({ delivery, event })
      else unreadable.push(delivery.id)
    }
    await queries.cancelPendingDeliveries(db, unreadable)
  }

  /** Sends one delivery and queues its attempt for recording (at once after a 410). */
  private async attempt({ delivery, event }: Item): Promise<void> {
    const sent = await postEvent(this.endpoint, this.secrets, event, this.cfg, this.options.resolve)
    const { outcome, label } = attemptOutcome(this.endpoint.id, delivery, sent, this.cfg)
    this.result.attempted++
    if (outcome.state === 'delivered') this.result.delivered++
    this.outcomes.push(outcome)
    this.labels.push({ outcome: label, latencyMs: sent.latencyMs })
    if (this.outcomes.length >= FLUSH_EVERY || sent.statusCode === 410) await this.flush()
  }

  /** Records the queued attempts after those already being recorded. */
  private flush(): Promise<void> {
    const batch = this.outcomes
    const stats = this.labels
    this.outcomes = []
    this.labels = []
    this.flushing = this.flushing.then(() => this.record(batch, stats)).catch(this.remember)
    return this.flushing
  }

  /** Writes attempts and their stats, then the endpoint's health: a 410 or a failing run past WEBHOOK_DISABLE_AFTER_MS disables it. */
  private async record(batch: queries.AttemptOutcome[], stats: { outcome: AttemptOutcomeLabel; latencyMs: number }[]): Promise<void> {
    if (batch.length === 0) return
    const { db } = this.deps.database
    await queries.recordAttempts(db, batch)
    await recordDeliveryStats(this.deps.queues.connection, this.deps.queues.prefix, stats).catch(() => {})
    if (batch.some((o) => o.statusCode === 410)) {
      this.disabled = true
      await queries.disableEndpoint(db, this.endpoint.id, 'the endpoint answered 410 Gone')
      return
    }
    const failingSince = await queries.setEndpointHealth(db, this.endpoint.id, healthAfter(batch))
    if (failingSince && Date.now() - failingSince.getTime() >= this.cfg.disableAfterMs) {
      this.disabled = true
      await queries.disableEndpoint(
        db,
        this.endpoint.id,
        `failing continuously since ${failingSince.toISOString()} (every attempt for ${Math.round(this.cfg.disableAfterMs / 1000)} s failed)`,
      )
    }
  }
}
