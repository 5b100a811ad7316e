/**
 * Listings operations (api-spec §4.2–4.5, contract §3): private drafts, explicit publication and
 * the public catalogue read from `catalogue_entries`, for the property routes, the
 * catalogue-reindex worker and `cli catalogue`. Every property write rebuilds the property's
 * catalogue row in its own transaction, so the next read sees it (contract §3.3).
 */
import type { Static } from '@sinclair/typebox'
import type { Db } from '../../db/client'
import { getCatalogueDocText } from '../../db/queries/catalogue/list'
import { analyzeCatalogue, analyzeCatalogueWhenDue, type PropertySlice } from '../../db/queries/catalogue/rebuild'
import { readCataloguePage, type CataloguePageCache } from './catalogue-cache'
import { countProperties, findProperty, insertProperty, isOwnerContact, setPublished, updatePropertyColumns } from '../../db/queries/properties'
import type { PropertyRow } from '../../db/schema'
import { requireBusiness } from '../access/accounts'
import { AppError, notFound, type FieldError } from '../platform/errors'
import type { ConcurrencyLimit } from '../platform/concurrency-limit'
import type { JobPayload } from '../platform/jobs'
import type { CreatedResponse } from '../platform/schemas'
import { readFor } from '../platform/read-replica'
import type { Services } from '../platform/services'
import { assertSchema } from '../platform/validation'
import { catalogueDocOf } from '../../db/queries/events'
import { eventRows, recordEvent, recordEvents } from '../events/record'
import { deletePropertyRow, mediaKeysOfProperty } from '../../db/queries/property-removal'
import { imagesOfProperty } from '../media/images'
import { queueDeletions, scheduleDeletions, type Deletion } from '../media/storage-cleanup'
import { publicKeyOf } from '../media/storage-keys'
import { COMPLETE_GRACE_MS } from '../media/upload-expiry'
import { videoDeletions, videosOfProperty } from '../media/videos'
import { catalogueQueryOf, countAnswer, type ListParams } from './catalogue-filters'
import * as rebuild from './catalogue-rebuild'
import { inputToColumns, mergePatch, propertyRuleErrors, rowToInput } from './property-input'
import { PropertyMerged, type ListFilters, type PrivatePropertyView, type PropertyCreate, type PropertyInput, type PropertyUpdate } from './schemas'

type ListingsDeps = Pick<Services, 'database'>
type Saved = Static<typeof CreatedResponse>

const PropertyNotFound = () => notFound('Property')

/**
 * Rules the schema cannot express, and the owner contact (contract §3.1); all problems in one
 * 422. `checkOwner` is false when the request did not set `owner_id`: a stored owner who has
 * since become another kind of contact must not lock the property against every edit.
 */
async function checkInput(tx: Db, businessId: number, input: PropertyInput, checkOwner = true): Promise<void> {
  const errors: FieldError[] = propertyRuleErrors(input)
  if (checkOwner && input.owner_id !== undefined && !(await isOwnerContact(tx, businessId, input.owner_id))) {
    errors.push({ loc: ['body', 'owner_id'], msg: 'Must be a contact of type "propietario" in this business', type: 'invalid' })
  }
  if (errors.length) {
    throw new AppError(
      'validation',
      errors.length === 1
        ? `${errors[0].loc.join('.')}: ${errors[0].msg}`
        : `${errors.length} invalid fields: ${errors.map((e) => e.loc.join('.')).join(', ')}`,
      { errors },
    )
  }
}

/** Runs `write` on the property of this business, locked (so concurrent writes apply in turn), in one transaction. */
async function writeProperty(deps: ListingsDeps, businessId: number, propertyId: number, write: (tx: Db, row: PropertyRow) => Promise<void>): Promise<Saved> {
  await deps.database.db.transaction(async (tx) => {
    const row = await findProperty(tx, businessId, propertyId, { forUpdate: true })
    if (!row) throw PropertyNotFound()
    await write(tx, row)
  })
  return { status: 'ok', id: propertyId }
}

/**
 * Creates a private draft in the caller's transaction: POST /properties wraps it in
 * `idempotent()`, so a 422 is stored with the Idempotency-Key like an answer. Returns its id.
 */
export async function createProperty(tx: Db, businessId: number, input: PropertyCreate): Promise<number> {
  await checkInput(tx, businessId, input)
  const id = await insertProperty(tx, businessId, inputToColumns(input))
  // A new property is a draft: no catalogue row until it is published (api-spec §4.2).
  // contract §10.1: `{id, published}` and the private fields sent.
  await recordEvents(tx, businessId, [{ type: 'property.created', object: { id, published: false, ...input } }])
  return id
}

/** contract §3.2: the patch merges into the stored record, and the merged record must pass the creation rules. */
export function updateProperty(deps: ListingsDeps, businessId: number, propertyId: number, patch: PropertyUpdate): Promise<Saved> {
  return writeProperty(deps, businessId, propertyId, async (tx, row) => {
    const merged: unknown = mergePatch(rowToInput(row), patch)
    assertSchema('body', PropertyMerged, merged)
    await checkInput(tx, businessId, merged, patch.owner_id !== undefined && patch.owner_id !== null)
    // contract §10.1: property.updated when the PATCH changed something, with the fields sent;
    // recorded by the update's own statement.
    const changed = JSON.stringify(rowToInput(row)) !== JSON.stringify(merged)
    const events = eventRows(changed ? [{ type: 'property.updated', object: { id: row.id, published: row.publishedAt !== null, ...patch } }] : [])
    await updatePropertyColumns(tx, row.id, inputToColumns(merged), { businessId, rows: events })
    if (row.publishedAt !== null) await rebuild.syncCatalogueEntry(tx, row.id)
  })
}

export function publishProperty(deps: ListingsDeps, businessId: number, propertyId: number): Promise<Saved> {
  return writeProperty(deps, businessId, propertyId, async (tx, row) => {
    await setPublished(tx, row.id, true)
    await rebuild.syncCatalogueEntry(tx, row.id)
    // contract §10.1: only when the state changes, with the public Property as now in the catalogue.
    if (row.publishedAt === null) {
      await recordEvents(tx, businessId, [{ type: 'property.published', object: (await catalogueDocOf(tx, row.id)) ?? { id: row.id } }])
    }
  })
}

export function unpublishProperty(deps: ListingsDeps, businessId: number, propertyId: number): Promise<Saved> {
  return writeProperty(deps, businessId, propertyId, async (tx, row) => {
    await setPublished(tx, row.id, false)
    await rebuild.syncCatalogueEntry(tx, row.id)
    if (row.publishedAt !== null) await recordEvents(tx, businessId, [{ type: 'property.unpublished', object: { id: row.id } }])
  })
}

/**
 * contract §9.4: the listing as its integrator wrote it, drafts included: the stored creation
 * fields (rowToInput, the same form a PATCH merges into), with `subtype` and `owner_id` null when
 * unset, and every image and video as their list operations show them.
 */
export async function getPrivateProperty(deps: ListingsDeps, businessId: number, propertyId: number): Promise<PrivatePropertyView> {
  const { db } = deps.database
  const row = await findProperty(db, businessId, propertyId)
  if (!row) throw PropertyNotFound()
  const [images, videos] = await Promise.all([imagesOfProperty(db, row.id), videosOfProperty(db, row.id)])
  const input = rowToInput(row) as PropertyInput
  return {
    id: row.id,
    status: input.status ?? 'disponible',
    published: row.publishedAt !== null,
    operations: input.operations,
    type: input.type,
    subtype: input.subtype ?? null,
    title: input.title,
    description: input.description ?? '',
    pricing: input.pricing,
    location: input.location,
    area: input.area,
    bedrooms: input.bedrooms ?? 0,
    bathrooms: input.bathrooms ?? 0,
    characteristics: input.characteristics ?? {},
    features: input.features ?? [],
    owner_id: input.owner_id ?? null,
    is_featured: input.is_featured ?? false,
    images,
    videos,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/**
 * contract §9.4: the listing disappears at once from every read (its catalogue row, images,
 * videos and uploads go with it in one transaction, which records `property.deleted`), and every
 * object storage holds for it (originals, public copies, video renditions) is handed to the
 * storage cleanup in that same transaction, then queued. An original an upload URL may still
 * write is deleted only once that URL has expired.
 */
export async function deleteProperty(
  deps: Pick<Services, 'config' | 'database' | 'queues' | 'logger'>,
  businessId: number,
  propertyId: number,
): Promise<Saved> {
  const scheduled = await deps.database.db.transaction(async (tx) => {
    const row = await findProperty(tx, businessId, propertyId, { forUpdate: true })
    if (!row) throw PropertyNotFound()
    const media = await mediaKeysOfProperty(tx, row.id)
    const writable = (until: Date | null) => (until ? new Date(until.getTime() + COMPLETE_GRACE_MS) : null)
    const deletions: Deletion[] = [
      ...media.images.flatMap((i): Deletion[] => [
        { area: 'private', key: i.originalKey },
        // A copy still being made is written under this key: deleted too (and makePublicCopy hands it over).
        { area: 'public', key: i.publicKey ?? publicKeyOf(deps.config.appSecret, i.id) },
      ]),
      ...media.files.map((f): Deletion => ({ area: 'private', key: f.originalKey, notBefore: writable(f.writableUntil) })),
      ...media.videos.flatMap((v) =>
        videoDeletions({
          state: v.writableUntil ? 'pending' : 'ready',
          originalKey: v.originalKey,
          publicPrefix: v.publicPrefix,
          uploadExpiresAt: v.writableUntil,
        }),
      ),
    ]
    const scheduled = await scheduleDeletions(tx, deletions)
    await rebuild.removeCatalogueEntry(tx, row.id)
    await deletePropertyRow(tx, businessId, row.id)
    await recordEvent(tx, businessId, { type: 'property.deleted', object: { id: row.id } })
    return scheduled
  })
  await queueDeletions(deps, scheduled)
  return { status: 'ok', id: propertyId }
}

/** One page of the public catalogue: the docs as PostgreSQL's JSON, to be spliced in as they are. */
export interface CataloguePage {
  /** The page's docs joined by `,` (the inside of the `data` array), as UTF-8 bytes. */
  data: Uint8Array
  count: number
  /** `eq` when `count` is exact; `gte` when a search reached its bound (contract §11). */
  countRelation: 'eq' | 'gte'
  limit: number
  offset: number
  filters: ListFilters
}

/** Catalogue reads may run on the read replica (docs/operations.md "Read replica") and be answered from the page cache. */
type CatalogueReadDeps = Pick<Services, 'database' | 'reads'> & {
  /** The API's in-process cache of list pages (CATALOGUE_CACHE_MB); absent, every list is read. */
  catalogueCache?: CataloguePageCache
  /** The bound on list statements at once (CATALOGUE_CONCURRENCY); absent, none. */
  catalogueReads?: ConcurrencyLimit
}

export async function listCatalogue(deps: CatalogueReadDeps, businessId: number, params: ListParams): Promise<CataloguePage> {
  const { query, filters } = catalogueQueryOf(businessId, params)
  const page = await readFor(deps, businessId, (database) => readCataloguePage(database.sql, query, deps.catalogueCache, deps.catalogueReads))
  const { count, relation } = countAnswer(query, page.count)
  return { data: page.data, count, countRelation: relation, limit: query.limit, offset: query.offset, filters }
}

/** The stored public JSON of a published property of this business; a draft or foreign id is not found. */
export async function getPublicPropertyText(deps: CatalogueReadDeps, businessId: number, propertyId: number): Promise<string> {
  const doc = await readFor(deps, businessId, (database) => getCatalogueDocText(database.sql, businessId, propertyId))
  if (doc === null) throw PropertyNotFound()
  return doc
}

/** Rebuilds one property's catalogue row from the source tables; safe to repeat. */
export function rebuildCatalogueEntry(deps: ListingsDeps, propertyId: number): Promise<rebuild.RebuildOutcome> {
  return deps.database.db.transaction((tx) => rebuild.syncCatalogueEntry(tx, propertyId))
}

/** Rebuilds the next `batchSize` properties of the slice, committed on its own. */
export function rebuildCatalogueBatch(deps: ListingsDeps, slice: PropertySlice): Promise<rebuild.BatchRebuilt> {
  return rebuild.syncCatalogueSlice(deps.database.db, slice)
}

/**
 * One step of a queued business reindex: rebuilds a slice and queues the next, so a
 * whole-business reindex is many short jobs (each retried on its own) rather than one long one.
 * The last gathers the catalogue's statistics when enough changed (analyzeCatalogueWhenDue).
 */
export async function reindexCatalogueSlice(
  deps: Pick<Services, 'database' | 'queues'>,
  slice: Extract<JobPayload<'catalogue-reindex'>, { afterId: number }>,
): Promise<rebuild.BatchRebuilt> {
  const result = await rebuildCatalogueBatch(deps, slice)
  if (result.lastId !== null) {
    await deps.queues.enqueue('catalogue-reindex', { businessId: slice.businessId, afterId: result.lastId, batchSize: slice.batchSize })
  } else await analyzeCatalogueWhenDue(deps.database.db)
  return result
}

export interface ReindexProgress {
  /** Properties of the scope when the reindex started. */
  total: number
  seen: number
  upserted: number
  deleted: number
}

/**
 * Rebuilds every catalogue row of one business (or of all) in id-ordered batches, each committed
 * on its own, so it is safe to interrupt and re-run. `onBatch` hears after each batch. An
 * unknown business is a not_found. At the end it gathers the catalogue's statistics, which the
 * search's plans need (analyzeCatalogue).
 */
export async function reindexCatalogue(
  deps: ListingsDeps,
  scope: { businessId?: number; batchSize: number },
  onBatch: (progress: ReindexProgress) => void = () => {},
): Promise<ReindexProgress> {
  if (scope.businessId !== undefined) await requireBusiness(deps, scope.businessId)
  const progress: ReindexProgress = { total: await countProperties(deps.database.db, scope.businessId), seen: 0, upserted: 0, deleted: 0 }
  let afterId = 0
  for (;;) {
    const r = await rebuildCatalogueBatch(deps, { businessId: scope.businessId, afterId, batchSize: scope.batchSize })
    if (r.lastId === null) {
      await analyzeCatalogue(deps.database.db)
      return progress
    }
    afterId = r.lastId
    progress.upserted += r.upserted
    progress.deleted += r.deleted
    progress.seen += r.upserted + r.deleted
    onBatch({ ...progress })
  }
}
