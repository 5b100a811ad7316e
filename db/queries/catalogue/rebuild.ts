/**
 * The catalogue read model's writes (architecture.md "Data"): `catalogue_entries` holds, per
 * published property, the public JSON and the columns every filter of api-spec §4.3 reads.
 * shared/listings builds both from the source rows read here; rows are rebuilt from the source
 * tables only, so a rebuild is idempotent. Every write bumps the business's catalogue version.
 */
import { and, asc, eq, gt, inArray, lt, isNotNull, sql as dsql } from 'drizzle-orm'
import type { Db } from '../../client'
import { properties, propertyImages, type PropertyRow } from '../../schema'

/** A `property_images` row in state `ready` with its public URL (never the original key). */
export interface ReadyImageRow {
  id: string
  publicUrl: string
  position: number
  isPrimary: boolean
  title: string
}

/** The columns the list filters and sorts read. */
export interface CatalogueFilterColumns {
  status: string
  operations: string[]
  type: string
  subtypeKey: string | null
  cityLc: string
  priceSale: number | null
  priceRent: number | null
  priceTransfer: number | null
  bedrooms: number
  isFeatured: boolean
  rentalKind: string | null
  /** Stored as `geog`; null when the property shows no point. */
  point: { lat: number; lon: number } | null
}

/** One catalogue row: the public JSON served as it is stored, and its filter columns. */
export interface CatalogueEntry extends CatalogueFilterColumns {
  propertyId: number
  businessId: number
  doc: unknown
  updatedAt: Date
}

/** Ready images of these properties, each list in position order. */
export async function readyImagesOf(db: Db, propertyIds: number[]): Promise<Map<number, ReadyImageRow[]>> {
  const byProperty = new Map<number, ReadyImageRow[]>()
  if (propertyIds.length === 0) return byProperty
  const rows = await db
    .select({
      propertyId: propertyImages.propertyId,
      id: propertyImages.id,
      publicUrl: propertyImages.publicUrl,
      position: propertyImages.position,
      isPrimary: propertyImages.isPrimary,
      title: propertyImages.title,
    })
    .from(propertyImages)
    .where(and(inArray(propertyImages.propertyId, propertyIds), eq(propertyImages.state, 'ready'), isNotNull(propertyImages.publicUrl)))
    .orderBy(asc(propertyImages.propertyId), asc(propertyImages.position))
  for (const r of rows) {
    // The query keeps only rows with a public URL.
    if (r.publicUrl === null) continue
    const list = byProperty.get(r.propertyId) ?? []
    list.push({ id: r.id, publicUrl: r.publicUrl, position: r.position, isPrimary: r.isPrimary, title: r.title })
    byProperty.set(r.propertyId, list)
  }
  return byProperty
}

/**
 * Upserts many entries in one statement (one JSON parameter, so any batch size is one round
 * trip) and returns the business of every row whose public document is new or changed.
 *
 * A row whose columns already hold these values is not written at all (a rebuild that changes
 * nothing leaves no trace), unless it still lacks its search vector (stored before migration
 * 0011). `changed_at` moves only when `doc` changes; `tsv` follows `doc` through the row's
 * trigger. A row counts as changed when its `changed_at` is this transaction's `now()`.
 */
export async function upsertCatalogueEntries(db: Db, entries: CatalogueEntry[]): Promise<number[]> {
  if (entries.length === 0) return []
  const records = entries.map((e) => ({
    property_id: e.propertyId,
    business_id: e.businessId,
    doc: e.doc,
    status: e.status,
    operations: e.operations,
    type: e.type,
    subtype_key: e.subtypeKey,
    city_lc: e.cityLc,
    price_sale: e.priceSale,
    price_rent: e.priceRent,
    price_transfer: e.priceTransfer,
    bedrooms: e.bedrooms,
    is_featured: e.isFeatured,
    rental_kind: e.rentalKind,
    lat: e.point?.lat ?? null,
    lon: e.point?.lon ?? null,
    updated_at: e.updatedAt.toISOString(),
  }))
  // `doc` is json (migration 0015), which has no equality: its text is compared, jsonb's rendering on both sides.
  const columns = ['business_id', 'doc::text', 'status', 'operations', 'type', 'subtype_key', 'city_lc', 'price_sale', 'price_rent', 'price_transfer'].concat([
    'bedrooms',
    'is_featured',
    'rental_kind',
    'updated_at',
  ])
  const stored = [...columns.map((c) => `catalogue_entries.${c}`), 'ST_AsBinary(catalogue_entries.geog)'].join(', ')
  const proposed = [...columns.map((c) => `excluded.${c}`), 'ST_AsBinary(excluded.geog)'].join(', ')
  const rows = await db.execute<{ business_id: number; changed: boolean }>(dsql`
    insert into catalogue_entries (property_id, business_id, doc, status, operations, type, subtype_key, city_lc,
      price_sale, price_rent, price_transfer, bedrooms, is_featured, rental_kind, geog, updated_at)
    select e.property_id, e.business_id, e.doc::json, e.status, e.operations, e.type, e.subtype_key, e.city_lc,
      e.price_sale, e.price_rent, e.price_transfer, e.bedrooms, e.is_featured, e.rental_kind,
      case when e.lon is null then null else ST_SetSRID(ST_MakePoint(e.lon, e.lat), 4326)::geography end,
      e.updated_at
    from jsonb_to_recordset(${JSON.stringify(records)}::jsonb) as e(property_id int, business_id int, doc jsonb, status text,
      operations text[], type text, subtype_key text, city_lc text, price_sale float8, price_rent float8, price_transfer float8,
      bedrooms int, is_featured boolean, rental_kind text, lat float8, lon float8, updated_at timestamptz)
    on conflict (property_id) do update set business_id = excluded.business_id, doc = excluded.doc, status = excluded.status,
      operations = excluded.operations, type = excluded.type, subtype_key = excluded.subtype_key, city_lc = excluded.city_lc,
      price_sale = excluded.price_sale, price_rent = excluded.price_rent, price_transfer = excluded.price_transfer,
      bedrooms = excluded.bedrooms, is_featured = excluded.is_featured, rental_kind = excluded.rental_kind,
      geog = excluded.geog, updated_at = excluded.updated_at,
      changed_at = case when catalogue_entries.doc::text is distinct from excluded.doc::text then now() else catalogue_entries.changed_at end
    where (${dsql.raw(stored)}) is distinct from (${dsql.raw(proposed)}) or catalogue_entries.tsv is null
    returning business_id, changed_at = now() as changed`)
  return [...new Set(rows.filter((r) => r.changed).map((r) => r.business_id))]
}

/** Deletes the catalogue rows of these properties; returns the business of each row deleted. */
export async function deleteCatalogueEntries(db: Db, propertyIds: number[]): Promise<number[]> {
  if (propertyIds.length === 0) return []
  const rows = await db.execute<{ business_id: number }>(
    dsql`delete from catalogue_entries where property_id = any(${dsql.raw(`'{${propertyIds.map((id) => Math.trunc(id)).join(',')}}'::int[]`)})
      returning business_id`,
  )
  return [...new Set(rows.map((r) => r.business_id))]
}

/**
 * Bumps the catalogue version of these businesses (architecture.md "Catalogue version"), in the
 * caller's transaction. The rows are locked in id order, so two batches that touch the same
 * businesses never deadlock, and with FOR NO KEY UPDATE (what the UPDATE takes anyway), which
 * the foreign-key checks of another transaction's catalogue writes (FOR KEY SHARE on the
 * business) never wait for: FOR UPDATE deadlocked two reindex batches. Each row stays locked
 * until commit, so versions follow commit order. `catalogue_changed_at` is the clock at the
 * bump (later than any commit that bumped before it) and never moves backwards.
 */
export async function bumpCatalogueVersions(db: Db, businessIds: number[]): Promise<void> {
  if (businessIds.length === 0) return
  const ids = dsql.raw(`'{${[...new Set(businessIds.map((id) => Math.trunc(id)))].join(',')}}'::int[]`)
  await db.execute(dsql`
    update businesses b set catalogue_version = b.catalogue_version + 1, catalogue_changed_at = greatest(b.catalogue_changed_at, clock_timestamp())
    from (select id from businesses where id = any(${ids}) order by id for no key update) locked
    where b.id = locked.id`)
}

/**
 * Takes the lock bumpCatalogueVersions takes, before a catalogue write of one listing. Otherwise
 * the write's foreign-key check takes FOR KEY SHARE on the business first, and two publishes or
 * PATCHes of one business holding it deadlocked in the bump (40P01, fault harness scenario i:
 * 13 of 320 PATCHes through PgBouncer). Locked first, the second waits for the first to commit.
 */
export async function lockCatalogueVersion(db: Db, businessId: number): Promise<void> {
  await db.execute(dsql`select id from businesses where id = ${businessId} for no key update`)
}

/**
 * The source row of one property for a rebuild, whatever its business. FOR SHARE waits for a
 * concurrent write of the property to commit, so a rebuild never overwrites a newer row with
 * what it read before that write.
 */
export async function findPropertyForRebuild(db: Db, propertyId: number): Promise<PropertyRow | null> {
  const [row] = await db.select().from(properties).where(eq(properties.id, propertyId)).for('share')
  return row ?? null
}

/** One slice of a rebuild: properties with afterId < id < beforeId (of one business, or all). */
export interface PropertySlice {
  businessId?: number
  afterId: number
  beforeId?: number
  batchSize: number
}

/** The next `batchSize` properties of the slice, in id order. */
export async function propertiesInSlice(db: Db, slice: PropertySlice): Promise<PropertyRow[]> {
  const where = and(
    gt(properties.id, slice.afterId),
    slice.beforeId === undefined ? undefined : lt(properties.id, slice.beforeId),
    slice.businessId === undefined ? undefined : eq(properties.businessId, slice.businessId),
  )
  return db.select().from(properties).where(where).orderBy(asc(properties.id)).limit(slice.batchSize)
}

/**
 * Moves the stored catalogue derivation forward to `version` (in the caller's transaction, its
 * row locked until commit); true when this call moved it, so exactly one caller acts on it.
 */
export async function advanceCatalogueDerivation(db: Db, version: number): Promise<boolean> {
  const rows = await db.execute(dsql`update catalogue_derivation set version = ${version} where id and version < ${version} returning version`)
  return rows.length > 0
}

/** Businesses that have catalogue rows, from the trigger-kept counts (no scan of the rows). */
export async function businessesWithCatalogueRows(db: Db): Promise<number[]> {
  const rows = await db.execute<{ business_id: number }>(dsql`select business_id from catalogue_counts where entries > 0 order by business_id`)
  return rows.map((r) => r.business_id)
}

/**
 * Gathers the planner's statistics of the catalogue tables. The search's plans depend on them
 * (a common word walks the recency index, a rare one reads its posting list: docs/properties.md
 * "Search"), and so do the price and map shapes. Autovacuum analyzes a table only after a share
 * of it changed, and not at all where it is off; a bulk rebuild runs this when it ends, so a
 * catalogue loaded in bulk is planned right from its first request.
 */
export async function analyzeCatalogue(db: Db): Promise<void> {
  await db.execute(dsql`analyze catalogue_entries, catalogue_search, catalogue_counts, catalogue_price_counts, catalogue_geo_cells`)
}

/**
 * analyzeCatalogue when autovacuum's own rule says catalogue_entries is due (rows changed since
 * its last analysis over 50 + 10% of its rows, or never analyzed): a queued reindex of every
 * business (the catalogue upgrade) then analyzes a few times, not once per business.
 */
export async function analyzeCatalogueWhenDue(db: Db): Promise<void> {
  const [row] = await db.execute<{ due: boolean }>(dsql`
    select s.last_analyze is null and s.last_autoanalyze is null or s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0) as due
    from pg_stat_user_tables s join pg_class c on c.oid = s.relid where s.relid = 'catalogue_entries'::regclass`)
  if (row?.due) await analyzeCatalogue(db)
}
