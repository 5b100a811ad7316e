/**
 * Rebuilding catalogue rows from the source tables (architecture.md "Data"): the public JSON and
 * the filter columns come from the same row through property-view.ts, so they never disagree.
 * These take the executor they write with, so a property write rebuilds its row in its own
 * transaction (read-your-writes, contract §3.3); operations.ts offers them to entry points.
 */
import type { Db } from '../../db/client'
import {
  deleteCatalogueEntries, deleteCatalogueEntry, findPropertyForRebuild, propertiesInSlice, readyImagesOf, upsertCatalogueEntries,
  type CatalogueEntry, type PropertySlice,
} from '../../db/queries/catalogue'
import type { PropertyRow } from '../../db/schema'
import { catalogueFilterColumns, toPublicProperty, type ReadyImage } from './property-view'

export type RebuildOutcome = 'upserted' | 'deleted'

export interface BatchRebuilt {
  /** The last id seen; null when the slice had nothing left. */
  lastId: number | null
  upserted: number
  deleted: number
}

export function catalogueEntryOf(row: PropertyRow, images: readonly ReadyImage[]): CatalogueEntry {
  return { propertyId: row.id, businessId: row.businessId, doc: toPublicProperty(row, images), ...catalogueFilterColumns(row), updatedAt: row.updatedAt }
}

/**
 * Makes the catalogue row of one property match the source tables: upserted when published,
 * deleted otherwise (draft, unpublished or gone).
 */
export async function rebuildCatalogueEntry(db: Db, propertyId: number): Promise<RebuildOutcome> {
  const row = await findPropertyForRebuild(db, propertyId)
  if (!row || row.publishedAt === null) {
    await deleteCatalogueEntry(db, propertyId)
    return 'deleted'
  }
  const images = await readyImagesOf(db, [row.id])
  await upsertCatalogueEntries(db, [catalogueEntryOf(row, images.get(row.id) ?? [])])
  return 'upserted'
}

/**
 * Rebuilds the next `batchSize` properties of the slice in id order, in one transaction of its
 * own; drops the catalogue rows of the unpublished ones.
 */
export async function rebuildCatalogueBatch(db: Db, slice: PropertySlice): Promise<BatchRebuilt> {
  return db.transaction(async (tx) => {
    const rows = await propertiesInSlice(tx, slice)
    if (rows.length === 0) return { lastId: null, upserted: 0, deleted: 0 }
    const published = rows.filter((r) => r.publishedAt !== null)
    const drafts = rows.filter((r) => r.publishedAt === null).map((r) => r.id)
    const images = await readyImagesOf(tx, published.map((r) => r.id))
    await upsertCatalogueEntries(tx, published.map((r) => catalogueEntryOf(r, images.get(r.id) ?? [])))
    await deleteCatalogueEntries(tx, drafts)
    return { lastId: rows[rows.length - 1].id, upserted: published.length, deleted: drafts.length }
  })
}
