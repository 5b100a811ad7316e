import { sql } from 'drizzle-orm'
import { boolean, doublePrecision, index, integer, jsonb, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core'
import { businesses } from './businesses'
import { contacts } from './contacts'

/** The private CRM record of a property (contract §3). The public view lives in `catalogue_entries`. */
export const properties = pgTable(
  'properties',
  {
    id: serial('id').primaryKey(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    operations: text('operations').array().notNull(),
    type: text('type').notNull(),
    subtype: text('subtype'),
    title: text('title').notNull(),
    description: text('description').notNull().default(''),
    priceSale: doublePrecision('price_sale'),
    priceRent: doublePrecision('price_rent'),
    priceTransfer: doublePrecision('price_transfer'),
    /** The `location` input object as given (city, address, coordinates, visibility, …). */
    location: jsonb('location').notNull(),
    /** The `area` input object as given (total, usable, built, plot). */
    area: jsonb('area').notNull(),
    bedrooms: integer('bedrooms').notNull().default(0),
    bathrooms: integer('bathrooms').notNull().default(0),
    characteristics: jsonb('characteristics').notNull().default({}),
    features: jsonb('features').notNull().default([]),
    ownerId: integer('owner_id').references(() => contacts.id, { onDelete: 'set null' }),
    isFeatured: boolean('is_featured').notNull().default(false),
    status: text('status').notNull().default('disponible'),
    publishedAt: timestamp('published_at', { withTimezone: true, mode: 'date' }),
    /** Private CRM metadata: never public, preserved by every update (api-spec §4.5). */
    metadata: jsonb('metadata').notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    index('properties_business_idx').on(t.businessId, t.id),
    // Deleting a contact sets owner_id null on its properties: without this index every deleted
    // contact scans the whole table (a business delete cascading to 250k leads took minutes).
    index('properties_owner_idx').on(t.ownerId).where(sql`${t.ownerId} is not null`),
  ],
)

export type PropertyRow = typeof properties.$inferSelect
