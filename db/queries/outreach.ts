/**
 * Outreach endpoints, deliveries and attempts (contract §4.2, §8). One endpoint per business;
 * its signing secret is stored only sealed (shared/platform/secret-box.ts). A delivery is the durable
 * record of one webhook to send; its job in the `outreach` queue may be lost and re-created
 * (sweep below), the row may not.
 */
import { and, desc, eq, getTableColumns, inArray, sql } from 'drizzle-orm'
import type { Db } from '../client'
import { outreachAttempts, outreachDeliveries, outreachEndpoints } from '../schema'

export type OutreachEndpointRow = typeof outreachEndpoints.$inferSelect
export type OutreachDeliveryRow = typeof outreachDeliveries.$inferSelect
export type OutreachAttemptRow = typeof outreachAttempts.$inferSelect
export type DeliveryState = OutreachDeliveryRow['state']

/** Creates the endpoint, or replaces its URL and secret (a rotation) and enables it again. */
export async function upsertOutreachEndpoint(
  db: Db,
  businessId: number,
  url: string,
  secretEncrypted: string,
): Promise<{ row: OutreachEndpointRow; created: boolean }> {
  const [row] = await db
    .insert(outreachEndpoints)
    .values({ businessId, url, secretEncrypted, enabled: true })
    .onConflictDoUpdate({
      target: outreachEndpoints.businessId,
      set: { url, secretEncrypted, enabled: true, updatedAt: sql`now()` },
    })
    // xmax = 0 only on a freshly inserted row: tells a first set from a rotation.
    .returning({ ...getTableColumns(outreachEndpoints), created: sql<boolean>`(xmax = 0)` })
  const { created, ...endpoint } = row
  return { row: endpoint, created }
}

export async function findOutreachEndpoint(db: Db, businessId: number): Promise<OutreachEndpointRow | null> {
  const [row] = await db.select().from(outreachEndpoints).where(eq(outreachEndpoints.businessId, businessId))
  return row ?? null
}

/** True when an endpoint exists and is enabled: the inquiry route's "queued" vs "not_configured". */
export async function hasEnabledOutreachEndpoint(db: Db, businessId: number): Promise<boolean> {
  const [row] = await db
    .select({ enabled: outreachEndpoints.enabled })
    .from(outreachEndpoints)
    .where(and(eq(outreachEndpoints.businessId, businessId), eq(outreachEndpoints.enabled, true)))
  return row !== undefined
}

export async function disableOutreachEndpoint(db: Db, businessId: number): Promise<OutreachEndpointRow | null> {
  const [row] = await db
    .update(outreachEndpoints)
    .set({ enabled: false, updatedAt: sql`now()` })
    .where(eq(outreachEndpoints.businessId, businessId))
    .returning()
  return row ?? null
}

export async function insertOutreachDelivery(
  db: Db,
  values: { id: string; businessId: number; inquiryId: number; payload: unknown; createdAt: Date },
): Promise<void> {
  await db.insert(outreachDeliveries).values(values)
}

export async function findOutreachDelivery(db: Db, id: string): Promise<OutreachDeliveryRow | null> {
  const [row] = await db.select().from(outreachDeliveries).where(eq(outreachDeliveries.id, id))
  return row ?? null
}

/**
 * Records one attempt and its outcome on the delivery in one transaction. The attempt number is
 * the delivery's counter incremented atomically, so it is unique even if a stalled job re-runs.
 * Only a `pending` delivery changes state (a delivered one is never downgraded).
 */
export async function recordOutreachAttempt(
  db: Db,
  deliveryId: string,
  attempt: { statusCode: number | null; latencyMs: number; error: string | null },
  outcome: { state: 'pending'; nextAttemptAt: Date | null } | { state: 'delivered' | 'failed' },
): Promise<number> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(outreachDeliveries)
      .set({
        attempts: sql`${outreachDeliveries.attempts} + 1`,
        lastStatusCode: attempt.statusCode,
        lastError: attempt.error,
        state: sql`case when ${outreachDeliveries.state} = 'pending' then ${outcome.state} else ${outreachDeliveries.state} end`,
        nextAttemptAt: outcome.state === 'pending' ? outcome.nextAttemptAt : null,
        deliveredAt: outcome.state === 'delivered' ? sql`coalesce(${outreachDeliveries.deliveredAt}, now())` : outreachDeliveries.deliveredAt,
      })
      .where(eq(outreachDeliveries.id, deliveryId))
      .returning({ attempts: outreachDeliveries.attempts })
    if (!row) return 0
    await tx.insert(outreachAttempts).values({ deliveryId, attempt: row.attempts, ...attempt })
    return row.attempts
  })
}

/** Ends a pending delivery without an attempt (endpoint disabled or removed meanwhile). */
export async function finishOutreachDelivery(db: Db, deliveryId: string, state: 'failed' | 'skipped', reason: string): Promise<void> {
  await db
    .update(outreachDeliveries)
    .set({ state, lastError: reason, nextAttemptAt: null })
    .where(and(eq(outreachDeliveries.id, deliveryId), eq(outreachDeliveries.state, 'pending')))
}

/**
 * One page of the pending deliveries that are due — never tried and created, or tried and due
 * again, more than `minAgeMs` ago — taken in turns across businesses: each business's oldest due
 * delivery first (rank 1), then every business's second, and so on, so one business's backlog
 * cannot push another's out of a sweep. A delivery waiting out its backoff is not due: its
 * delayed job is the normal case. The rank is what the sweep queues it with (its priority).
 */
export async function listDuePendingDeliveries(db: Db, minAgeMs: number, page: { limit: number; offset: number }): Promise<{ id: string; rank: number }[]> {
  const rows = await db.execute<{ id: string; rank: string }>(sql`
    select id, rank from (
      select id, coalesce(next_attempt_at, created_at) as due_at,
        row_number() over (partition by business_id order by coalesce(next_attempt_at, created_at), id) as rank
      from outreach_deliveries
      where state = 'pending' and coalesce(next_attempt_at, created_at) < now() - make_interval(secs => ${minAgeMs / 1000})
    ) due
    order by rank, due_at, id
    limit ${page.limit} offset ${page.offset}`)
  return rows.map((r) => ({ id: r.id, rank: Number(r.rank) }))
}

/**
 * An operator retries the delivery's exhausted job: a failed or skipped delivery is pending
 * again (its attempt numbers continue). A delivered one is never sent again.
 */
export async function reopenOutreachDelivery(db: Db, deliveryId: string): Promise<boolean> {
  const rows = await db
    .update(outreachDeliveries)
    .set({ state: 'pending', nextAttemptAt: null })
    .where(and(eq(outreachDeliveries.id, deliveryId), inArray(outreachDeliveries.state, ['failed', 'skipped'])))
    .returning({ id: outreachDeliveries.id })
  return rows.length > 0
}

export interface DeliveryWithAttempts extends OutreachDeliveryRow {
  attemptRows: OutreachAttemptRow[]
}

/** The newest deliveries of a business with every attempt, for `cli outreach deliveries`. */
export async function listOutreachDeliveries(db: Db, businessId: number, limit: number): Promise<DeliveryWithAttempts[]> {
  const rows = await db
    .select()
    .from(outreachDeliveries)
    .where(eq(outreachDeliveries.businessId, businessId))
    .orderBy(desc(outreachDeliveries.createdAt), desc(outreachDeliveries.id))
    .limit(limit)
  if (rows.length === 0) return []
  const attempts = await db
    .select()
    .from(outreachAttempts)
    .where(
      inArray(
        outreachAttempts.deliveryId,
        rows.map((r) => r.id),
      ),
    )
    .orderBy(outreachAttempts.deliveryId, outreachAttempts.attempt)
  const byDelivery = new Map<string, OutreachAttemptRow[]>()
  for (const a of attempts) {
    const list = byDelivery.get(a.deliveryId)
    if (list) list.push(a)
    else byDelivery.set(a.deliveryId, [a])
  }
  return rows.map((r) => ({ ...r, attemptRows: byDelivery.get(r.id) ?? [] }))
}

/** The outreach deliveries of a lead's inquiries (the export, contract §13). */
export async function outreachDeliveriesOfContact(
  db: Db,
  contactId: number,
): Promise<{ id: string; inquiryId: number; state: DeliveryState; attempts: number }[]> {
  const rows = await db.execute<{ id: string; inquiry_id: number; state: DeliveryState; attempts: number }>(sql`
    select d.id, d.inquiry_id, d.state, d.attempts from outreach_deliveries d
    join lead_inquiries i on i.id = d.inquiry_id
    where i.contact_id = ${contactId} order by d.created_at, d.id`)
  return [...rows].map((r) => ({ id: r.id, inquiryId: r.inquiry_id, state: r.state, attempts: r.attempts }))
}

/** Seconds since the oldest outreach delivery still pending was created (0 when none): a metric. */
export async function oldestPendingOutreachAgeSeconds(db: Db): Promise<number> {
  const rows = await db.execute<{ age: number | null }>(sql`
    select extract(epoch from now() - min(created_at))::float8 as age from outreach_deliveries where state = 'pending'`)
  return Math.max(0, Number(rows[0]?.age ?? 0))
}
