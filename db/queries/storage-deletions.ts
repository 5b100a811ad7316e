/**
 * Objects waiting to be deleted from storage (contract §9.1, §9.4). Rows are inserted in the
 * transaction that stops referencing the objects; the storage-cleanup worker deletes the objects
 * while holding the row's lock and removes the row in the same transaction.
 */
import { and, eq, inArray, lt, sql } from 'drizzle-orm'
import type { Db } from '../client'
import { storageDeletions } from '../schema'

export type DeletionArea = (typeof storageDeletions.$inferSelect)['area']
export type DeletionKind = (typeof storageDeletions.$inferSelect)['kind']

export interface NewDeletion {
  area: DeletionArea
  key: string
  kind?: DeletionKind
}

export interface DeletionRow {
  id: number
  area: DeletionArea
  key: string
  kind: DeletionKind
  attempts: number
}

/** Returns the new rows' ids, in the order given. */
export async function insertDeletions(db: Db, rows: NewDeletion[]): Promise<number[]> {
  if (rows.length === 0) return []
  const inserted = await db
    .insert(storageDeletions)
    .values(rows.map((r) => ({ area: r.area, key: r.key, kind: r.kind ?? 'object' })))
    .returning({ id: storageDeletions.id })
  return inserted.map((r) => r.id)
}

/**
 * The row, locked for the rest of the transaction; null when it is gone (done already) or another
 * transaction holds it (a cleanup of the same row, or the transcode that still owns the prefix).
 */
export async function lockDeletion(tx: Db, id: number): Promise<DeletionRow | 'busy' | null> {
  const rows = await tx.execute<{ id: string | number; area: DeletionArea; key: string; kind: DeletionKind; attempts: number }>(
    sql`select id, area, key, kind, attempts from storage_deletions where id = ${id} for update skip locked`,
  )
  if (rows.length) {
    const r = rows[0]
    return { id: Number(r.id), area: r.area, key: r.key, kind: r.kind, attempts: r.attempts }
  }
  const [exists] = await tx.select({ id: storageDeletions.id }).from(storageDeletions).where(eq(storageDeletions.id, id))
  return exists ? 'busy' : null
}

export async function deleteDeletion(db: Db, id: number): Promise<boolean> {
  const rows = await db.delete(storageDeletions).where(eq(storageDeletions.id, id)).returning({ id: storageDeletions.id })
  return rows.length > 0
}

export async function recordDeletionFailure(db: Db, id: number, error: string): Promise<void> {
  await db
    .update(storageDeletions)
    .set({ attempts: sql`${storageDeletions.attempts} + 1`, lastError: error.slice(0, 1000) })
    .where(eq(storageDeletions.id, id))
}

/** Rows older than the cutoff (their job should have run by now), oldest first. */
export async function deletionsOlderThan(db: Db, olderThanMs: number, limit: number): Promise<number[]> {
  const cutoff = new Date(Date.now() - olderThanMs)
  const rows = await db
    .select({ id: storageDeletions.id })
    .from(storageDeletions)
    .where(lt(storageDeletions.createdAt, cutoff))
    .orderBy(storageDeletions.createdAt)
    .limit(limit)
  return rows.map((r) => r.id)
}

/** Whether rows with these keys are waiting (tests and the transcode's own row). */
export async function pendingDeletionsOf(db: Db, area: DeletionArea, keys: string[]): Promise<DeletionRow[]> {
  if (keys.length === 0) return []
  return db
    .select({
      id: storageDeletions.id,
      area: storageDeletions.area,
      key: storageDeletions.key,
      kind: storageDeletions.kind,
      attempts: storageDeletions.attempts,
    })
    .from(storageDeletions)
    .where(and(eq(storageDeletions.area, area), inArray(storageDeletions.key, keys)))
}
