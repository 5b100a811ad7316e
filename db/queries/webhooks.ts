/**
 * Webhook endpoints, deliveries and attempts (contract §10.2). A delivery is one event to one
 * endpoint: created by the relay, `pending` until an attempt succeeds (`delivered`), its retry
 * window ends (`failed`), or its event is erased or its endpoint disabled (`cancelled`). Its
 * `next_attempt_at` is when it is due; a runner that claims it moves it past the claim's lease,
 * so a delivery whose runner died is due again once the lease ends (at-least-once).
 */
import { and, eq, sql } from 'drizzle-orm'
import type { Db } from '../client'
import { intArray, textArray } from './events'
import { webhookEndpoints } from '../schema'

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect

// ---- endpoints --------------------------------------------------------------------------------

export async function insertEndpoint(
  db: Db,
  values: { businessId: number; url: string; description: string | null; enabledEvents: string[]; eventScopes: string[]; secretSealed: string },
): Promise<WebhookEndpointRow> {
  const [row] = await db.insert(webhookEndpoints).values(values).returning()
  return row
}

/**
 * Serialises endpoint creation of one business until the transaction ends (the count bound).
 * FOR NO KEY UPDATE does not block the key-share locks that inserts referencing the business take.
 */
export async function lockBusinessEndpoints(db: Db, businessId: number): Promise<void> {
  await db.execute(sql`select id from businesses where id = ${businessId} for no key update`)
}

export async function countEndpoints(db: Db, businessId: number): Promise<number> {
  const rows = await db.execute<{ n: number }>(sql`select count(*)::int as n from webhook_endpoints where business_id = ${businessId}`)
  return rows[0].n
}

export function listEndpoints(db: Db, businessId: number): Promise<WebhookEndpointRow[]> {
  return db.select().from(webhookEndpoints).where(eq(webhookEndpoints.businessId, businessId)).orderBy(webhookEndpoints.id)
}

export async function findEndpoint(db: Db, businessId: number, id: number, options: { forUpdate?: boolean } = {}): Promise<WebhookEndpointRow | null> {
  const q = db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.businessId, businessId)))
  const [row] = options.forUpdate ? await q.for('update') : await q
  return row ?? null
}

/** Any business's endpoint: the delivery runner holds only its id. */
export async function findEndpointById(db: Db, id: number): Promise<WebhookEndpointRow | null> {
  const [row] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id))
  return row ?? null
}

export async function updateEndpoint(
  db: Db,
  id: number,
  set: Partial<Pick<WebhookEndpointRow, 'url' | 'description' | 'enabledEvents' | 'eventScopes' | 'status' | 'disabledReason' | 'failingSince'>>,
): Promise<WebhookEndpointRow> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({ ...set, updatedAt: sql`now()` })
    .where(eq(webhookEndpoints.id, id))
    .returning()
  return row
}

export async function deleteEndpoint(db: Db, businessId: number, id: number): Promise<boolean> {
  const rows = await db
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.businessId, businessId)))
    .returning({ id: webhookEndpoints.id })
  return rows.length > 0
}

/** The current secret becomes the previous one, which keeps signing for `overlapMs` (contract §10.2: 24 h). */
export async function rotateEndpointSecret(db: Db, id: number, secretSealed: string, previousSealed: string, overlapMs: number): Promise<WebhookEndpointRow> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({
      secretSealed,
      previousSecretSealed: previousSealed,
      previousSecretExpiresAt: sql`now() + make_interval(secs => ${overlapMs / 1000})`,
      updatedAt: sql`now()`,
    })
    .where(eq(webhookEndpoints.id, id))
    .returning()
  return row
}

/** The enabled endpoints of these businesses (the relay matches events against them). */
export async function enabledEndpointsOf(
  db: Db,
  businessIds: number[],
): Promise<Pick<WebhookEndpointRow, 'id' | 'businessId' | 'enabledEvents' | 'eventScopes'>[]> {
  if (businessIds.length === 0) return []
  const rows = await db.execute<{ id: number; business_id: number; enabled_events: string[]; event_scopes: string[] }>(sql`
    select id, business_id, enabled_events, event_scopes from webhook_endpoints
    where business_id = any(${intArray(businessIds)}) and status = 'enabled'`)
  return [...rows].map((r) => ({ id: r.id, businessId: r.business_id, enabledEvents: r.enabled_events, eventScopes: r.event_scopes }))
}

/**
 * Disables an enabled endpoint with its reason and cancels its pending deliveries (none will be
 * attempted again). false when it was not enabled (someone else got there first).
 */
export async function disableEndpoint(db: Db, id: number, reason: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const rows = await tx.execute(sql`
      update webhook_endpoints set status = 'disabled', disabled_reason = ${reason}, updated_at = now()
      where id = ${id} and status = 'enabled' returning id`)
    if (rows.length === 0) return false
    await cancelPendingDeliveriesOfEndpoint(tx, id)
    return true
  })
}

export async function cancelPendingDeliveriesOfEndpoint(db: Db, endpointId: number): Promise<void> {
  await db.execute(sql`update webhook_deliveries set state = 'cancelled', next_attempt_at = null where endpoint_id = ${endpointId} and state = 'pending'`)
}

/**
 * After a runner's attempts (contract §10.2: "failing continuously"): `ok` clears
 * `failing_since`; `failing` sets it to `since` when the run of failures started in these
 * attempts (after a success), else keeps the start already recorded. Returns the new value.
 */
export async function setEndpointHealth(
  db: Db,
  id: number,
  health: { kind: 'ok' } | { kind: 'failing'; since: Date; afterSuccess: boolean },
): Promise<Date | null> {
  const next =
    health.kind === 'ok'
      ? sql`null::timestamptz`
      : health.afterSuccess
        ? sql`${health.since.toISOString()}::timestamptz`
        : sql`coalesce(failing_since, ${health.since.toISOString()}::timestamptz)`
  const rows = await db.execute<{ failing_since: string | Date | null }>(sql`
    update webhook_endpoints set failing_since = ${next} where id = ${id} returning failing_since`)
  const v = rows[0]?.failing_since
  return v ? new Date(v) : null
}

// ---- deliveries -------------------------------------------------------------------------------

/** New deliveries, due now; one per (endpoint, event) whatever happens twice. Returns the endpoints that got one. */
export async function insertDeliveries(db: Db, rows: { businessId: number; endpointId: number; eventId: string }[]): Promise<number[]> {
  if (rows.length === 0) return []
  const inserted = await db.execute<{ endpoint_id: number }>(sql`
    insert into webhook_deliveries (business_id, endpoint_id, event_id, next_attempt_at)
    select r."businessId", r."endpointId", r."eventId", now()
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r("businessId" int, "endpointId" int, "eventId" text)
    on conflict (endpoint_id, event_id) do nothing
    returning endpoint_id`)
  return [...new Set([...inserted].map((r) => r.endpoint_id))]
}

export interface ClaimedDelivery {
  id: string
  eventId: string
  attempts: number
  /**
   * Where its retry window starts: its first attempt since it was created or reopened (now, for
   * one never attempted). Counted from there, as the endpoint's `failing_since` is, a delivery
   * cannot give up before a continuously failing endpoint has failed for the same bound.
   */
  windowStart: Date
}

/**
 * Takes up to `limit` due deliveries of one endpoint, oldest due first, and leases them for
 * `leaseMs` (their next_attempt_at moves past it): a runner that dies leaves them due again
 * after the lease. SKIP LOCKED: a runner never waits on another. Uses
 * webhook_deliveries_endpoint_due_idx (endpoint_id, next_attempt_at) where pending.
 */
export async function claimDueDeliveries(db: Db, endpointId: number, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  // The window's start reads webhook_attempts_delivery_idx (delivery_id).
  const rows = await db.execute<{ id: string; event_id: string; attempts: number; window_start: string | Date }>(sql`
    update webhook_deliveries d set next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000})
    where d.id in (
      select id from webhook_deliveries
      where endpoint_id = ${endpointId} and state = 'pending' and next_attempt_at <= now()
      order by next_attempt_at limit ${limit}
      for update skip locked)
    returning d.id, d.event_id, d.attempts,
      coalesce((select min(a.attempted_at) from webhook_attempts a where a.delivery_id = d.id and a.attempted_at >= d.created_at), now()) as window_start`)
  return [...rows].map((r) => ({ id: r.id, eventId: r.event_id, attempts: r.attempts, windowStart: new Date(r.window_start) }))
}

export interface AttemptOutcome {
  deliveryId: string
  endpointId: number
  statusCode: number | null
  error: string | null
  latencyMs: number
  attemptedAt: Date
  /** What the delivery becomes: delivered, failed (its retry window is over), or pending until nextAttemptAt. */
  state: 'delivered' | 'failed' | 'pending'
  nextAttemptAt: Date | null
}

/**
 * Records attempts and their deliveries' outcomes in one statement. The attempt number is the
 * delivery's counter incremented atomically (a redelivery continues it). A delivery no longer
 * pending (cancelled meanwhile, or delivered by a run that outlived its lease) keeps its state.
 */
export async function recordAttempts(db: Db, outcomes: AttemptOutcome[]): Promise<void> {
  if (outcomes.length === 0) return
  const rows = outcomes.map((o) => ({
    id: o.deliveryId,
    endpoint_id: o.endpointId,
    status_code: o.statusCode,
    error: o.error,
    latency_ms: o.latencyMs,
    attempted_at: o.attemptedAt.toISOString(),
    state: o.state,
    next_attempt_at: o.nextAttemptAt?.toISOString() ?? null,
  }))
  await db.execute(sql`
    with o as (
      select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as o(
        id uuid, endpoint_id int, status_code int, error text, latency_ms int, attempted_at timestamptz, state text, next_attempt_at timestamptz)
    ), updated as (
      update webhook_deliveries d set
        attempts = d.attempts + 1,
        state = case when d.state = 'pending' then o.state else d.state end,
        next_attempt_at = case when d.state = 'pending' and o.state = 'pending' then o.next_attempt_at else null end,
        delivered_at = case when d.state = 'pending' and o.state = 'delivered' then o.attempted_at else d.delivered_at end
      from o where d.id = o.id
      returning d.id, d.attempts
    )
    insert into webhook_attempts (delivery_id, endpoint_id, attempt, status_code, error, latency_ms, attempted_at)
    select o.id, o.endpoint_id, updated.attempts, o.status_code, o.error, o.latency_ms, o.attempted_at
    from o join updated on updated.id = o.id`)
}

/**
 * Enabled endpoints that have a due delivery (new, retry due, or lease over): the poller wakes
 * their runners. One index probe per enabled endpoint.
 */
export async function endpointsWithDueDeliveries(db: Db, limit: number): Promise<number[]> {
  const rows = await db.execute<{ id: number }>(sql`
    select e.id from webhook_endpoints e
    where e.status = 'enabled' and exists (
      select 1 from webhook_deliveries d where d.endpoint_id = e.id and d.state = 'pending' and d.next_attempt_at <= now())
    order by e.id limit ${limit}`)
  return [...rows].map((r) => r.id)
}

/**
 * Redelivery (contract §15): the delivery of the event to the endpoint is pending and due again
 * (created if the endpoint never had it); its attempt numbers continue, and its retry window
 * starts again.
 */
export async function reopenDelivery(db: Db, businessId: number, endpointId: number, eventId: string): Promise<string> {
  const rows = await db.execute<{ id: string }>(sql`
    insert into webhook_deliveries (business_id, endpoint_id, event_id, next_attempt_at)
    values (${businessId}, ${endpointId}, ${eventId}, now())
    on conflict (endpoint_id, event_id) do update set state = 'pending', next_attempt_at = now(), created_at = now()
    returning id`)
  return rows[0].id
}

/** These deliveries, if still pending, end `cancelled` (the endpoint may not be sent their event). */
export async function cancelPendingDeliveries(db: Db, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return
  await db.execute(sql`
    update webhook_deliveries set state = 'cancelled', next_attempt_at = null
    where id = any(${textArray(deliveryIds)}::uuid[]) and state = 'pending'`)
}

/** Pending deliveries of these events end `cancelled` (their event was erased, contract §13). */
export async function cancelPendingDeliveriesOfEvents(db: Db, eventIds: string[]): Promise<number> {
  if (eventIds.length === 0) return 0
  const rows = await db.execute(sql`
    update webhook_deliveries set state = 'cancelled', next_attempt_at = null
    where event_id = any(${textArray(eventIds)}) and state = 'pending' returning id`)
  return rows.length
}

export interface AttemptRow {
  id: number
  deliveryId: string
  eventId: string
  eventType: string
  attempt: number
  statusCode: number | null
  error: string | null
  latencyMs: number
  attemptedAt: Date
}

/** The endpoint's newest attempts; uses webhook_attempts_endpoint_idx (endpoint_id, attempted_at). */
export async function listAttempts(db: Db, endpointId: number, limit: number): Promise<AttemptRow[]> {
  const rows = await db.execute<{
    id: number
    delivery_id: string
    event_id: string
    type: string
    attempt: number
    status_code: number | null
    error: string | null
    latency_ms: number
    attempted_at: string | Date
  }>(sql`
    select a.id, a.delivery_id, d.event_id, e.type, a.attempt, a.status_code, a.error, a.latency_ms, a.attempted_at
    from webhook_attempts a
    join webhook_deliveries d on d.id = a.delivery_id
    join events e on e.id = d.event_id
    where a.endpoint_id = ${endpointId}
    order by a.attempted_at desc, a.id desc limit ${limit}`)
  return [...rows].map((r) => ({
    id: r.id,
    deliveryId: r.delivery_id,
    eventId: r.event_id,
    eventType: r.type,
    attempt: r.attempt,
    statusCode: r.status_code,
    error: r.error,
    latencyMs: r.latency_ms,
    attemptedAt: new Date(r.attempted_at),
  }))
}

/** Seconds since the oldest event still waiting for a webhook delivery was recorded (0 when none): a metric. */
export async function oldestUndeliveredAgeSeconds(db: Db): Promise<number> {
  const rows = await db.execute<{ age: number | null }>(sql`
    select extract(epoch from now() - min(e.created_at))::float8 as age
    from webhook_deliveries d join events e on e.id = d.event_id where d.state = 'pending'`)
  return Math.max(0, Number(rows[0]?.age ?? 0))
}

/** Endpoint summaries for operators (`cli webhooks list`): counts of deliveries per state. */
export async function deliveryCountsOf(db: Db, endpointIds: number[]): Promise<Map<number, Record<string, number>>> {
  const out = new Map<number, Record<string, number>>()
  if (endpointIds.length === 0) return out
  const rows = await db.execute<{ endpoint_id: number; state: string; n: number }>(sql`
    select endpoint_id, state, count(*)::int as n from webhook_deliveries where endpoint_id = any(${intArray(endpointIds)}) group by endpoint_id, state`)
  for (const r of rows) out.set(r.endpoint_id, { ...out.get(r.endpoint_id), [r.state]: r.n })
  return out
}
