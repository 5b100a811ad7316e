/**
 * Rebuilding catalogue rows from the source tables (architecture.md "Data"): the public JSON and
 * the filter columns come from the same row through property-view.ts, so they never disagree.
 * These take the executor they write with, so a property write rebuilds its row in its own
 * transaction (read-your-writes, contract §3.3); operations.ts offers them to entry points.
 *
 * Every public change goes through here (property writes, publication, media), so this is where
 * the catalogue version moves (architecture.md "Catalogue version"): when a row is inserted,
 * deleted or gets a different document, its `changed_at` moves and its business's version is
 * bumped in the same transaction; a rebuild that changes nothing moves nothing.
 */
import type { Db } from '../../db/client'
import {
  bumpCatalogueVersions,
  deleteCatalogueEntries,
  findPropertyForRebuild,
  lockCatalogueVersion,
  propertiesInSlice,
  readyImagesOf,
  upsertCatalogueEntries,
  type CatalogueEntry,
  type PropertySlice,
  type ReadyImageRow,
} from '../../db/queries/catalogue/rebuild'
import { readyVideosOf } from '../../db/queries/videos'
import type { PropertyRow } from '../../db/schema'
import { catalogueFilterColumns, toPublicProperty, type ReadyVideo } from './property-view'

export type RebuildOutcome = 'upserted' | 'deleted'

export interface BatchRebuilt {
  /** The last id seen; null when the slice had nothing left. */
  lastId: number | null
  upserted: number
  deleted: number
}

export function catalogueEntryOf(row: PropertyRow, images: readonly ReadyImageRow[], videos: readonly ReadyVideo[] = []): CatalogueEntry {
  return {
    propertyId: row.id,
    businessId: row.businessId,
    doc: toPublicProperty(row, images, videos),
    ...catalogueFilterColumns(row),
    updatedAt: row.updatedAt,
  }
}

/**
 * Makes the catalogue row of one property match the source tables, in the caller's transaction
 * (a write of the property or its media): upserted when published, deleted otherwise (draft,
 * unpublished or gone). operations.ts rebuildCatalogueEntry runs it in a transaction of its own.
 */
export async function syncCatalogueEntry(db: Db, propertyId: number): Promise<RebuildOutcome> {
  const row = await findPropertyForRebuild(db, propertyId)
  if (!row || row.publishedAt === null) {
    await bumpCatalogueVersions(db, await deleteCatalogueEntries(db, [propertyId]))
    return 'deleted'
  }
  await lockCatalogueVersion(db, row.businessId)
  const images = await readyImagesOf(db, [row.id])
  const videos = await readyVideosOf(db, [row.id])
  await bumpCatalogueVersions(db, await upsertCatalogueEntries(db, [catalogueEntryOf(row, images.get(row.id) ?? [], videos.get(row.id) ?? [])]))
  return 'upserted'
}

/**
 * Takes a listing out of the catalogue before its property row is deleted (contract §9.4): the
 * row's foreign key would cascade the catalogue row away without moving the version.
 */
export async function removeCatalogueEntry(db: Db, propertyId: number): Promise<void> {
  await bumpCatalogueVersions(db, await deleteCatalogueEntries(db, [propertyId]))
}

/**
 * Makes the catalogue rows of the next `batchSize` properties of the slice (id order) match the
 * source tables, in one transaction of its own; drops those of the unpublished ones.
 */
export async function syncCatalogueSlice(db: Db, slice: PropertySlice): Promise<BatchRebuilt> {
  return db.transaction(async (tx) => {
    const rows = await propertiesInSlice(tx, slice)
    if (rows.length === 0) return { lastId: null, upserted: 0, deleted: 0 }
    const published = rows.filter((r) => r.publishedAt !== null)
    const drafts = rows.filter((r) => r.publishedAt === null).map((r) => r.id)
    const images = await readyImagesOf(
      tx,
      published.map((r) => r.id),
    )
    const videos = await readyVideosOf(
      tx,
      published.map((r) => r.id),
    )
    const changed = await upsertCatalogueEntries(
      tx,
      published.map((r) => catalogueEntryOf(r, images.get(r.id) ?? [], videos.get(r.id) ?? [])),
    )
    const removed = await deleteCatalogueEntries(tx, drafts)
    await bumpCatalogueVersions(tx, [...changed, ...removed])
    return { lastId: rows[rows.length - 1].id, upserted: published.length, deleted: drafts.length }
  })
}
