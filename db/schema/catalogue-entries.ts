import { sql } from 'drizzle-orm'
import {
  bigint,
  boolean,
  check,
  customType,
  doublePrecision,
  index,
  integer,
  json,
  pgSequence,
  pgTable,
  point,
  primaryKey,
  text,
  timestamp,
} from 'drizzle-orm/pg-core'
import { businesses } from './businesses'
import { properties } from './properties'
import { geographyPoint } from './types'

/** A text-search vector; written by PostgreSQL only (a trigger), never parsed here. */
const tsvector = customType<{ data: string; driverData: string }>({
  dataType() {
    return 'tsvector'
  },
})

/**
 * The public catalogue read model: one row per published property, its public JSON (`doc`,
 * built by shared/listings/property-view.ts) beside the columns every api-spec §4.3 filter reads.
 */
export const catalogueEntries = pgTable(
  'catalogue_entries',
  {
    propertyId: integer('property_id')
      .primaryKey()
      .references(() => properties.id, { onDelete: 'cascade' }),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    doc: json('doc').notNull(),
    status: text('status').notNull(),
    operations: text('operations').array().notNull(),
    type: text('type').notNull(),
    subtypeKey: text('subtype_key'),
    cityLc: text('city_lc'),
    priceSale: doublePrecision('price_sale'),
    priceRent: doublePrecision('price_rent'),
    priceTransfer: doublePrecision('price_transfer'),
    bedrooms: integer('bedrooms').notNull(),
    isFeatured: boolean('is_featured').notNull(),
    /** 'temporal' | 'vacacional' | 'anual' | null (no rental operation). */
    rentalKind: text('rental_kind'),
    /** Published point: exact when public, rounded when approximate, null when hidden. */
    geog: geographyPoint('geog'),
    /**
     * The published point as a plain PostgreSQL `point` (x longitude, y latitude), kept by
     * PostgreSQL from `geog`. Its GiST opclass can return the stored value, so an area's matches
     * are found by an index-only scan of catalogue_business_pt_gist; PostGIS's GiST opclasses
     * cannot (migration 0017).
     */
    pt: point('pt', { mode: 'xy' }).generatedAlwaysAs(sql`point(st_x((geog)::geometry), st_y((geog)::geometry))`),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** When `doc` last changed (media included): the feed's `<date>` (contract §12). Set by upsertCatalogueEntries. */
    changedAt: timestamp('changed_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /**
     * What `q` searches (contract §11): catalogue_search_vector(doc), kept by a trigger whenever
     * `doc` changes (migration 0011). Null only on rows stored before it that no reindex has
     * rebuilt yet.
     */
    tsv: tsvector('tsv'),
  },
  (t) => [
    // INCLUDE (operations, the three prices, bedrooms, type, status, is_featured) (migration
    // 0017): a filter in the default order walks this index until the page is full, without
    // reading the heap row of each listing it passes.
    index('catalogue_business_updated_idx').on(t.businessId, t.updatedAt.desc(), t.propertyId.desc()),
    // Areas (migration 0017): every area filter is scoped to one business and first keeps the
    // points inside the area's bounding box (`pt <@ box`), then tests the exact shape on `geog`.
    // Both read this index alone (index-only scan: `geog` and the sort key are INCLUDEd, see the
    // migration; drizzle cannot declare INCLUDE), so a city-wide polygon never visits the heap
    // rows of its thousands of matches, which a business's listings spread over the whole table.
    // The two PostGIS GiSTs it replaces, on (business_id, geog) and (business_id, geog::geometry),
    // found the same rows but had to read each from the heap (1M listings, city polygon: 400 → 5 ms).
    index('catalogue_business_pt_gist').using('gist', t.businessId, t.pt),
    // The smallest index led by business_id (deduplicated): the total count of an unfiltered
    // list is an index-only scan of it.
    index('catalogue_business_idx').on(t.businessId),
    // One B-tree per price sort (api-spec §4.3 rule 2), in the exact order of the list query
    // (price nulls last, then id desc), so a sorted page is an index scan that stops at the page.
    // The sale price serves every listing (no `operation`); rent and transfer only exist for
    // their operation, so theirs are partial, as are the sale ones for `operation=venta`: the
    // per-operation count of a price range is then an index-only scan of that operation's rows.
    // The ascending ones INCLUDE updated_at (migration 0017): a price range in the default order
    // is then its matches read from the index and the top 100 kept by updated_at, without the
    // heap; walking catalogue_business_updated_idx instead read the heap row of every listing it
    // passed to test the price (1M listings: 183 → ~10 ms p95 SQL alone).
    index('catalogue_sale_asc_idx').on(t.businessId, t.priceSale.asc().nullsLast(), t.propertyId.desc()),
    index('catalogue_sale_desc_idx').on(t.businessId, t.priceSale.desc().nullsLast(), t.propertyId.desc()),
    index('catalogue_venta_sale_asc_idx').on(t.businessId, t.priceSale.asc().nullsLast(), t.propertyId.desc()).where(sql`operations @> '{venta}'::text[]`),
    index('catalogue_venta_sale_desc_idx').on(t.businessId, t.priceSale.desc().nullsLast(), t.propertyId.desc()).where(sql`operations @> '{venta}'::text[]`),
    index('catalogue_alquiler_rent_asc_idx')
      .on(t.businessId, t.priceRent.asc().nullsLast(), t.propertyId.desc())
      .where(sql`operations @> '{alquiler}'::text[]`),
    index('catalogue_alquiler_rent_desc_idx')
      .on(t.businessId, t.priceRent.desc().nullsLast(), t.propertyId.desc())
      .where(sql`operations @> '{alquiler}'::text[]`),
    index('catalogue_traspaso_transfer_asc_idx')
      .on(t.businessId, t.priceTransfer.asc().nullsLast(), t.propertyId.desc())
      .where(sql`operations @> '{traspaso}'::text[]`),
    index('catalogue_traspaso_transfer_desc_idx')
      .on(t.businessId, t.priceTransfer.desc().nullsLast(), t.propertyId.desc())
      .where(sql`operations @> '{traspaso}'::text[]`),
    // INCLUDE (bedrooms, updated_at, property_id) (migration 0017): city + type (+ bedrooms) is
    // counted and its page sorted from this index alone.
    index('catalogue_business_city_idx').on(t.businessId, t.cityLc, t.type),
    // `q` (contract §11): one GIN over (business_id, tsv) (btree_gin) intersects the business
    // with the words inside the index, so only that business's matches are read. With a GIN on
    // tsv alone the planner read the business's rows and tested each vector (1M rows, 1,000 per
    // business: a common word 6 → 15 ms, two words 5 → 29 ms; docs/properties.md "Search").
    index('catalogue_business_tsv_gin').using('gin', t.businessId, t.tsv),
  ],
)

/**
 * Rows of `catalogue_entries` per business, kept by statement-level triggers (migration 0003) in
 * the same transaction as the rows themselves. The total of an unfiltered list is read here
 * instead of counting 100,000 index entries per request (bench: ~5–9 ms of CPU per request).
 */
export const catalogueCounts = pgTable('catalogue_counts', {
  businessId: integer('business_id')
    .primaryKey()
    .references(() => businesses.id, { onDelete: 'cascade' }),
  entries: bigint('entries', { mode: 'number' }).notNull().default(0),
  /**
   * Of those, the rows offering each operation (migration 0017): the total of a list filtered by
   * one operation alone (with or without a price sort) is read here instead of counting ~60,000
   * index entries of a business of 100,000 (~10 ms of PostgreSQL CPU per request).
   */
  venta: bigint('venta', { mode: 'number' }).notNull().default(0),
  alquiler: bigint('alquiler', { mode: 'number' }).notNull().default(0),
  traspaso: bigint('traspaso', { mode: 'number' }).notNull().default(0),
  /**
   * Moves (to a fresh value of catalogue_generation_seq, never reused) in every statement that
   * inserts, changes or deletes a catalogue row of the business, by the same triggers, so no
   * writer can forget it (migration 0018). It keys the API's in-process cache of list pages:
   * a page cached under the generation a read finds is that read's answer.
   */
  generation: bigint('generation', { mode: 'number' }).notNull().default(0),
})

/**
 * Listings per business, operation and price bucket (migration 0019): `bucket` is
 * catalogue_price_bucket(price, catalogue_price_width(op)), the price of that operation
 * (price_sale for venta, price_rent for alquiler, price_transfer for traspaso) divided by the
 * operation's width (10,000 / 50 / 5,000) and floored. Kept by the triggers of catalogue_entries
 * in the same statement. The total of an operation's price range is the sum of the buckets wholly
 * inside it plus the listings of the partial buckets at its two edges, counted from the index
 * (db/queries/catalogue/counts.ts), instead of every index entry of the range.
 */
export const cataloguePriceCounts = pgTable(
  'catalogue_price_counts',
  {
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    op: text('op').notNull(),
    bucket: bigint('bucket', { mode: 'number' }).notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.businessId, t.op, t.bucket] })],
)

/**
 * Published points per business and map cell (migration 0023): a cell is 1/64 of a degree of
 * latitude by 1/64 of longitude (~1.7 × 1.4 km in Spain), `cy` = floor(latitude · 64) and
 * `cx` = floor(longitude · 64) of the stored `pt` (exact: a product by a power of two). Kept by the
 * triggers of catalogue_entries in the same statement, like catalogue_price_counts. The total of a
 * rectangle drawn on a map is the sum of the cells wholly inside it plus the points of the strips
 * along its four edges, counted from catalogue_business_pt_gist (catalogue_box_page), instead of
 * every point inside it.
 */
export const catalogueGeoCells = pgTable(
  'catalogue_geo_cells',
  {
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    cy: integer('cy').notNull(),
    cx: integer('cx').notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.businessId, t.cy, t.cx] })],
)

/** Values of catalogue_counts.generation: a sequence, so a generation never repeats, even after a truncate. */
export const catalogueGenerationSeq = pgSequence('catalogue_generation_seq')

/**
 * The derivation of the public document that the stored catalogue rows were built with (one
 * row, migration 0029). When the code's is newer (shared/listings/catalogue-upgrade.ts), the
 * first worker to notice moves this forward and queues a rebuild of every business's rows, so a
 * change to what a public document holds reaches the rows stored before it.
 */
export const catalogueDerivation = pgTable(
  'catalogue_derivation',
  {
    id: boolean('id').primaryKey().default(true),
    version: integer('version').notNull(),
  },
  (t) => [check('catalogue_derivation_one_row', sql`${t.id}`)],
)
