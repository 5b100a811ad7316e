import { sql } from 'drizzle-orm'
import { doublePrecision, index, integer, jsonb, pgTable, serial, smallint, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { businesses } from './businesses'

/** Leads (contract §4). Every duplicate rule of the contract is one of the unique indexes below. */
export const contacts = pgTable(
  'contacts',
  {
    id: serial('id').primaryKey(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    type: text('type', { enum: ['demandante', 'propietario'] })
      .notNull()
      .default('demandante'),
    name: text('name').notNull(),
    email: text('email'),
    phone: text('phone'),
    source: text('source'),
    operation: text('operation', { enum: ['venta', 'alquiler', 'traspaso'] }),
    propertyTypes: text('property_types').array().notNull().default(sql`'{}'::text[]`),
    rating: smallint('rating'),
    urgency: text('urgency', { enum: ['baja-urgencia', 'media-urgencia', 'alta-urgencia'] }),
    budgetMax: doublePrecision('budget_max'),
    minBedrooms: integer('min_bedrooms'),
    searchLocation: jsonb('search_location'),
    notes: text('notes').notNull().default(''),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('contacts_business_phone_uq').on(t.businessId, t.phone).where(sql`${t.phone} is not null`),
    uniqueIndex('contacts_business_email_uq').on(t.businessId, sql`lower(${t.email})`).where(sql`${t.email} is not null`),
    index('contacts_business_created_idx').on(t.businessId, t.createdAt.desc(), t.id.desc()),
    index('contacts_business_updated_idx').on(t.businessId, t.updatedAt),
  ],
)

export type ContactRow = typeof contacts.$inferSelect
