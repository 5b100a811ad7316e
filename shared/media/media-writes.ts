/**
 * What every change to a listing's media does in its transaction (contract §9.1, §9.3, §10.1):
 * the property row is locked first (concurrent changes apply in turn, and the catalogue row is
 * rebuilt in the same order), the catalogue row is rebuilt so the next read sees the change, and
 * `property.updated` is recorded as the transaction's last write.
 */
import type { Db } from '../../db/client'
import { findProperty } from '../../db/queries/properties'
import type { PropertyRow } from '../../db/schema'
import { recordEvent } from '../events/record'
import { syncCatalogueEntry } from '../listings/catalogue-rebuild'
import { notFound } from '../platform/errors'

export const PropertyNotFound = () => notFound('Property')

/** The property of this business, locked for the rest of the transaction; 404 otherwise. */
export async function lockProperty(tx: Db, businessId: number, propertyId: number): Promise<PropertyRow> {
  const row = await findProperty(tx, businessId, propertyId, { forUpdate: true })
  if (!row) throw PropertyNotFound()
  return row
}

/** The property of this business (read, not locked); 404 otherwise. */
export async function requireProperty(db: Db, businessId: number, propertyId: number): Promise<PropertyRow> {
  const row = await findProperty(db, businessId, propertyId)
  if (!row) throw PropertyNotFound()
  return row
}

/**
 * After a media change made through the API: the catalogue row is rebuilt and `property.updated`
 * recorded with `{id, published}` and the list that changed (`images` or `videos`, as its list
 * operation shows it). Call it last in the transaction.
 */
export async function mediaChanged(tx: Db, row: PropertyRow, change: { images: unknown[] } | { videos: unknown[] }): Promise<void> {
  await syncCatalogueEntry(tx, row.id)
  await recordEvent(tx, row.businessId, { type: 'property.updated', object: { id: row.id, published: row.publishedAt !== null, ...change } })
}
