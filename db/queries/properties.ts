/** Data access for the private `properties` record (contract §3). Every lookup is scoped by business. */
import { and, eq, sql } from 'drizzle-orm'
import type { Db } from '../client'
import { contacts, properties, type PropertyRow } from '../schema'
import type { inputToColumns } from '../../shared/listings/property-input'

type Columns = ReturnType<typeof inputToColumns>

export async function insertProperty(db: Db, businessId: number, columns: Columns): Promise<number> {
  const [row] = await db.insert(properties).values({ businessId, ...columns }).returning({ id: properties.id })
  return row.id
}

/** The row of this business, locked for the rest of the transaction when `forUpdate` (so concurrent PATCHes merge in turn). */
export async function findProperty(db: Db, businessId: number, id: number, options: { forUpdate?: boolean } = {}): Promise<PropertyRow | null> {
  const q = db.select().from(properties).where(and(eq(properties.id, id), eq(properties.businessId, businessId)))
  const [row] = options.forUpdate ? await q.for('update') : await q
  return row ?? null
}

export async function updatePropertyColumns(db: Db, id: number, columns: Columns): Promise<void> {
  // metadata and images are not in `columns`: an update preserves them (api-spec §4.5).
  await db.update(properties).set({ ...columns, updatedAt: sql`now()` }).where(eq(properties.id, id))
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
