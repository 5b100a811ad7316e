import { sql } from 'drizzle-orm'
import { bigint, boolean, customType, doublePrecision, index, integer, json, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
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
 * built by shared/property-view.ts) beside the columns every api-spec §4.3 filter reads.
 */
export const catalogueEntries = pgTable(
  'catalogue_entries',
  {
    propertyId: integer('property_id').primaryKey().references(() => properties.id, { onDelete: 'cascade' }),
    businessId: integer('business_id').notNull().references(() => businesses.id, { onDelete: 'cascade' }),
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
    index('catalogue_business_updated_idx').on(t.businessId, t.updatedAt.desc(), t.propertyId.desc()),
    // Every area filter is scoped to one business: a GiST on (business_id, geog) (btree_gist)
    // finds that business's points in the area directly; a GiST on geog alone made PostgreSQL
    // AND its bitmap with all 100,000 rows of the business (bench: 25 ms → 1.5 ms).
    index('catalogue_business_geog_gist').using('gist', t.businessId, t.geog),
    // Polygons and rectangles are planar latitude/longitude shapes (what a map draws; a
    // great-circle edge misses points near a box's edge): they test `geog::geometry`, which
    // this expression index answers the same way.
    index('catalogue_business_geom_gist').using('gist', t.businessId, sql`(${t.geog}::geometry)`),
    // The smallest index led by business_id (deduplicated): the total count of an unfiltered
    // list is an index-only scan of it.
    index('catalogue_business_idx').on(t.businessId),
    // One B-tree per price sort (api-spec §4.3 rule 2), in the exact order of the list query
    // (price nulls last, then id desc), so a sorted page is an index scan that stops at the page.
    // The sale price serves every listing (no `operation`); rent and transfer only exist for
    // their operation, so theirs are partial, as are the sale ones for `operation=venta`: the
    // per-operation count of a price range is then an index-only scan of that operation's rows.
    index('catalogue_sale_asc_idx').on(t.businessId, t.priceSale.asc().nullsLast(), t.propertyId.desc()),
    index('catalogue_sale_desc_idx').on(t.businessId, t.priceSale.desc().nullsLast(), t.propertyId.desc()),
    index('catalogue_venta_sale_asc_idx').on(t.businessId, t.priceSale.asc().nullsLast(), t.propertyId.desc()).where(sql`operations @> '{venta}'::text[]`),
    index('catalogue_venta_sale_desc_idx').on(t.businessId, t.priceSale.desc().nullsLast(), t.propertyId.desc()).where(sql`operations @> '{venta}'::text[]`),
    index('catalogue_alquiler_rent_asc_idx').on(t.businessId, t.priceRent.asc().nullsLast(), t.propertyId.desc()).where(sql`operations @> '{alquiler}'::text[]`),
    index('catalogue_alquiler_rent_desc_idx').on(t.businessId, t.priceRent.desc().nullsLast(), t.propertyId.desc()).where(sql`operations @> '{alquiler}'::text[]`),
    index('catalogue_traspaso_transfer_asc_idx').on(t.businessId, t.priceTransfer.asc().nullsLast(), t.propertyId.desc()).where(sql`operations @> '{traspaso}'::text[]`),
    index('catalogue_traspaso_transfer_desc_idx').on(t.businessId, t.priceTransfer.desc().nullsLast(), t.propertyId.desc()).where(sql`operations @> '{traspaso}'::text[]`),
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
  businessId: integer('business_id').primaryKey().references(() => businesses.id, { onDelete: 'cascade' }),
  entries: bigint('entries', { mode: 'number' }).notNull().default(0),
})
