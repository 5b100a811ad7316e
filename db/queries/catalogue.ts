/**
 * The catalogue read model (architecture.md "Data"): `catalogue_entries` holds, per published
 * property, the public JSON built by shared/property-view.ts and the columns every filter of
 * api-spec §4.3 reads. Rows are rebuilt from the source tables only, so a rebuild is idempotent.
 */
import { and, asc, eq, gt, inArray, lt, isNotNull, sql as dsql } from 'drizzle-orm'
import type { Db, Sql } from '../client'
import { properties, propertyImages, type PropertyRow } from '../schema'
import { catalogueFilterColumns, toPublicProperty, type ReadyImage } from '../../shared/listings/property-view'
import type { CatalogueQuery } from '../../shared/listings/catalogue-filters'

async function readyImages(db: Db, propertyIds: number[]): Promise<Map<number, ReadyImage[]>> {
  const byProperty = new Map<number, ReadyImage[]>()
  if (propertyIds.length === 0) return byProperty
  const rows = await db
    .select({ propertyId: propertyImages.propertyId, id: propertyImages.id, publicUrl: propertyImages.publicUrl, position: propertyImages.position, isPrimary: propertyImages.isPrimary, title: propertyImages.title })
    .from(propertyImages)
    .where(and(inArray(propertyImages.propertyId, propertyIds), eq(propertyImages.state, 'ready'), isNotNull(propertyImages.publicUrl)))
    .orderBy(asc(propertyImages.propertyId), asc(propertyImages.position))
  for (const r of rows) {
    const list = byProperty.get(r.propertyId) ?? []
    list.push({ id: r.id, publicUrl: r.publicUrl!, position: r.position, isPrimary: r.isPrimary, title: r.title })
    byProperty.set(r.propertyId, list)
  }
  return byProperty
}

function entryOf(row: PropertyRow, images: ReadyImage[]) {
  const c = catalogueFilterColumns(row)
  return {
    property_id: row.id,
    business_id: row.businessId,
    doc: toPublicProperty(row, images),
    status: c.status,
    operations: c.operations,
    type: c.type,
    subtype_key: c.subtypeKey,
    city_lc: c.cityLc,
    price_sale: c.priceSale,
    price_rent: c.priceRent,
    price_transfer: c.priceTransfer,
    bedrooms: c.bedrooms,
    is_featured: c.isFeatured,
    rental_kind: c.rentalKind,
    lat: c.point?.lat ?? null,
    lon: c.point?.lon ?? null,
    updated_at: row.updatedAt.toISOString(),
  }
}

/** Upserts many entries in one statement (one JSON parameter, so any batch size is one round trip). */
async function upsertEntries(db: Db, entries: ReturnType<typeof entryOf>[]): Promise<void> {
  if (entries.length === 0) return
  await db.execute(dsql`
    insert into catalogue_entries (property_id, business_id, doc, status, operations, type, subtype_key, city_lc,
      price_sale, price_rent, price_transfer, bedrooms, is_featured, rental_kind, geog, updated_at)
    select e.property_id, e.business_id, e.doc, e.status, e.operations, e.type, e.subtype_key, e.city_lc,
      e.price_sale, e.price_rent, e.price_transfer, e.bedrooms, e.is_featured, e.rental_kind,
      case when e.lon is null then null else ST_SetSRID(ST_MakePoint(e.lon, e.lat), 4326)::geography end,
      e.updated_at
    from jsonb_to_recordset(${JSON.stringify(entries)}::jsonb) as e(property_id int, business_id int, doc jsonb, status text,
      operations text[], type text, subtype_key text, city_lc text, price_sale float8, price_rent float8, price_transfer float8,
      bedrooms int, is_featured boolean, rental_kind text, lat float8, lon float8, updated_at timestamptz)
    on conflict (property_id) do update set business_id = excluded.business_id, doc = excluded.doc, status = excluded.status,
      operations = excluded.operations, type = excluded.type, subtype_key = excluded.subtype_key, city_lc = excluded.city_lc,
      price_sale = excluded.price_sale, price_rent = excluded.price_rent, price_transfer = excluded.price_transfer,
      bedrooms = excluded.bedrooms, is_featured = excluded.is_featured, rental_kind = excluded.rental_kind,
      geog = excluded.geog, updated_at = excluded.updated_at`)
}

/**
 * Makes the catalogue row of one property match the source tables: upserted when published,
 * deleted otherwise (draft, unpublished or gone). Call it inside the write's transaction for
 * read-your-writes (contract §3.3).
 */
export async function rebuildCatalogueEntry(db: Db, propertyId: number): Promise<'upserted' | 'deleted'> {
  // FOR SHARE waits for a concurrent write of the property to commit, so a rebuild never
  // overwrites a newer row with what it read before that write.
  const [row] = await db.select().from(properties).where(eq(properties.id, propertyId)).for('share')
  if (!row || row.publishedAt === null) {
    await db.execute(dsql`delete from catalogue_entries where property_id = ${propertyId}`)
    return 'deleted'
  }
  const images = await readyImages(db, [row.id])
  await upsertEntries(db, [entryOf(row, images.get(row.id) ?? [])])
  return 'upserted'
}

/**
 * Rebuilds the properties with id > afterId (of one business, or all), `batchSize` at a time in
 * id order; drops catalogue rows of unpublished properties in the same id range. Returns the last
 * id seen (null when there was nothing left).
 */
export async function rebuildCatalogueBatch(db: Db, params: { businessId?: number; afterId: number; batchSize: number; beforeId?: number }): Promise<{ lastId: number | null; upserted: number; deleted: number }> {
  return db.transaction(async (tx) => {
    const where = and(
      gt(properties.id, params.afterId),
      params.beforeId === undefined ? undefined : lt(properties.id, params.beforeId),
      params.businessId === undefined ? undefined : eq(properties.businessId, params.businessId),
    )
    const rows = await tx.select().from(properties).where(where).orderBy(asc(properties.id)).limit(params.batchSize)
    if (rows.length === 0) return { lastId: null, upserted: 0, deleted: 0 }
    const published = rows.filter((r) => r.publishedAt !== null)
    const drafts = rows.filter((r) => r.publishedAt === null).map((r) => r.id)
    const images = await readyImages(tx, published.map((r) => r.id))
    await upsertEntries(tx, published.map((r) => entryOf(r, images.get(r.id) ?? [])))
    if (drafts.length) await tx.execute(dsql`delete from catalogue_entries where property_id = any(${dsql.raw(`'{${drafts.join(',')}}'::int[]`)})`)
    return { lastId: rows[rows.length - 1].id, upserted: published.length, deleted: drafts.length }
  })
}

/** The stored public JSON of one published property of this business, as text (no re-serialising). */
export async function getCatalogueDocText(sql: Sql, businessId: number, propertyId: number): Promise<string | null> {
  // Primary key lookup; business_id checked so another workspace's id is "not found".
  const rows = await sql<{ doc: string }[]>`select doc::text as doc from catalogue_entries where property_id = ${propertyId} and business_id = ${businessId}`
  return rows[0]?.doc ?? null
}

const OPERATION_LITERALS = new Set(['venta', 'alquiler', 'traspaso'])

/**
 * WHERE of the list, as SQL text with $n placeholders. Operations are inlined as literals from
 * the fixed set (never user text) so the planner can match the per-operation partial price
 * indexes (migration 0001).
 */
function whereOf(q: CatalogueQuery, params: unknown[]): string {
  const p = (value: unknown) => {
    params.push(value)
    return `$${params.length}`
  }
  const parts = [`business_id = ${p(q.businessId)}`]
  if (q.operations !== undefined) {
    const ops = q.operations.filter((o) => OPERATION_LITERALS.has(o))
    if (ops.length === 0) parts.push('false')
    else if (ops.length === 1) parts.push(`operations @> '{${ops[0]}}'::text[]`)
    else parts.push(`operations && '{${ops.join(',')}}'::text[]`)
  }
  if (q.status !== undefined) parts.push(`status = ${p(q.status)}`)
  if (q.rentalKind !== undefined) parts.push(`rental_kind = ${p(q.rentalKind)}`)
  if (q.type !== undefined) parts.push(`type = ${p(q.type)}`)
  if (q.subtypeKey !== undefined) parts.push(`subtype_key = ${p(q.subtypeKey)}`)
  if (q.cityLc !== undefined) parts.push(`city_lc = ${p(q.cityLc)}`)
  if (q.minPrice !== undefined) parts.push(`${q.priceColumn} >= ${p(q.minPrice)}::float8`)
  if (q.maxPrice !== undefined) parts.push(`${q.priceColumn} <= ${p(q.maxPrice)}::float8`)
  if (q.minBedrooms !== undefined) parts.push(`bedrooms >= ${p(q.minBedrooms)}::int`)
  if (q.isFeatured !== undefined) parts.push(`is_featured = ${p(q.isFeatured)}::boolean`)
  if (q.areas && q.areas.length) {
    // Each area is a predicate catalogue_business_geog_gist answers; a null geog (hidden) never matches.
    const areas = q.areas.map((a) =>
      a.kind === 'circle'
        ? `ST_DWithin(geog, ST_SetSRID(ST_MakePoint(${p(a.lng)}::float8, ${p(a.lat)}::float8), 4326)::geography, ${p(a.radius)}::float8)`
        : `ST_Intersects(geog, ST_GeogFromText(${p(a.wkt)}::text))`,
    )
    parts.push(`(${areas.join(' or ')})`)
  }
  return parts.join(' and ')
}

/**
 * Sort keys. Each has a B-tree that yields it directly: default → catalogue_business_updated_idx;
 * price_asc/desc → catalogue_<op>_<price>_<dir>_idx when one operation is filtered, else
 * catalogue_sale_<dir>_idx. `nulls last` on the id and updated_at too (never null): it is how
 * the indexes are built, so the planner reads the order straight from them.
 */
function orderOf(q: CatalogueQuery, alias = ''): string {
  const price = `${alias}${q.priceColumn}`
  if (q.sort === 'price_asc') return `${price} asc nulls last, ${alias}property_id desc nulls last`
  if (q.sort === 'price_desc') return `${price} desc nulls last, ${alias}property_id desc nulls last`
  return `${alias}updated_at desc nulls last, ${alias}property_id desc nulls last`
}

export type CountMode = 'separate' | 'window'

/**
 * One statement: the page's ids in sort order (a deferred join, so the rows a large offset skips
 * never load their doc), the total count from the same WHERE, and the page's docs aggregated in
 * order into the text of the JSON array's elements.
 *
 * Sent unprepared (unnamed statement): PostgreSQL then plans it with the actual values, and a
 * generic plan cannot pick an index that is wrong for this price range or area (measured: a
 * prepared price-range query went from 6 ms to 75 ms once the generic plan kicked in).
 */
export function catalogueListSql(q: CatalogueQuery, mode: CountMode = 'separate'): { text: string; params: unknown[] } {
  const params: unknown[] = []
  const where = whereOf(q, params)
  // No filter but the business: the total is the trigger-kept catalogue_counts row (migration 0003).
  const countSql = where === 'business_id = $1' ? 'select coalesce((select entries from catalogue_counts where business_id = $1), 0)' : `select count(*) from catalogue_entries where ${where}`
  const limit = `${(params.push(q.limit), `$${params.length}`)}::int`
  const offset = `${(params.push(q.offset), `$${params.length}`)}::int`
  const cols = q.sort ? `property_id, ${q.priceColumn}` : 'property_id, updated_at'
  const agg = `select string_agg(c.doc::text, ',' order by ${orderOf(q, 'c.')}) from page join catalogue_entries c using (property_id)`
  if (mode === 'window') {
    // Total from count(*) over () on the page rows; an empty page (offset past the end) falls back to a count.
    return {
      text: `with page as (select ${cols}, count(*) over () as total from catalogue_entries where ${where} order by ${orderOf(q)} limit ${limit} offset ${offset})
select coalesce((select total from page limit 1), (${countSql}))::int as count, (${agg}) as data`,
      params,
    }
  }
  return {
    text: `with page as (select ${cols} from catalogue_entries where ${where} order by ${orderOf(q)} limit ${limit} offset ${offset})
select (${countSql})::int as count, (${agg}) as data`,
    params,
  }
}

export async function listCatalogue(sql: Sql, q: CatalogueQuery, mode: CountMode = 'separate'): Promise<{ count: number; dataText: string }> {
  const { text, params } = catalogueListSql(q, mode)
  const [row] = await sql.unsafe<{ count: number; data: string | null }[]>(text, params as never[])
  return { count: row.count, dataText: row.data ?? '' }
}
