/** Data access for the private `properties` record (contract §3). Every lookup is scoped by business. */
import { and, count, eq, sql } from 'drizzle-orm'
import type { Db } from '../client'
import { executeWithEvents, type NewEventRow } from './events'
import { contacts, properties, type PropertyRow } from '../schema'

/**
 * What a property input writes: every column but the keys, publication, private metadata and
 * timestamps. All required, so a PATCH writes the whole merged record and a cleared field
 * really goes back to its default.
 */
export type PropertyColumns = Required<Omit<typeof properties.$inferInsert, 'id' | 'businessId' | 'publishedAt' | 'metadata' | 'createdAt' | 'updatedAt'>>

export async function insertProperty(db: Db, businessId: number, columns: PropertyColumns): Promise<number> {
  const [row] = await db
    .insert(properties)
    .values({ businessId, ...columns })
    .returning({ id: properties.id })
  return row.id
}

/** The row of this business, locked for the rest of the transaction when `forUpdate` (so concurrent PATCHes merge in turn). */
export async function findProperty(db: Db, businessId: number, id: number, options: { forUpdate?: boolean } = {}): Promise<PropertyRow | null> {
  const q = db
    .select()
    .from(properties)
    .where(and(eq(properties.id, id), eq(properties.businessId, businessId)))
  const [row] = options.forUpdate ? await q.for('update') : await q
  return row ?? null
}

/** With `events`, the update and the events' insert are one statement (executeWithEvents). */
export async function updatePropertyColumns(db: Db, id: number, columns: PropertyColumns, events?: { businessId: number; rows: NewEventRow[] }): Promise<void> {
  // metadata and images are not in `columns`: an update preserves them (api-spec §4.5).
  const update = db
    .update(properties)
    .set({ ...columns, updatedAt: sql`now()` })
    .where(eq(properties.id, id))
  if (events) await executeWithEvents(db, update.getSQL(), events.businessId, events.rows)
  else await update
}

/** Sets `published_at` once (publishing twice keeps the first date); null unpublishes. */
export async function setPublished(db: Db, id: number, published: boolean): Promise<void> {
  await db
    .update(properties)
    .set({ publishedAt: published ? sql`coalesce(${properties.publishedAt}, now())` : null })
    .where(eq(properties.id, id))
}

/** contract §3.1: `owner_id` must be a `propietario` contact of the same business. */
export async function isOwnerContact(db: Db, businessId: number, contactId: number): Promise<boolean> {
  const [row] = await db
    .select({ id: contacts.id })
    .from(contacts)
    .where(and(eq(contacts.id, contactId), eq(contacts.businessId, businessId), eq(contacts.type, 'propietario')))
  return row !== undefined
}

/** Properties of one business, or of all when `businessId` is undefined. */
export async function countProperties(db: Db, businessId?: number): Promise<number> {
  const [row] = await db
    .select({ total: count() })
    .from(properties)
    .where(businessId === undefined ? undefined : eq(properties.businessId, businessId))
  return row.total
}
