import { sql } from 'drizzle-orm'
import { boolean, index, integer, jsonb, pgTable, serial, smallint, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { businesses } from './businesses'
import { contacts } from './contacts'
import { properties } from './properties'

/** Contact-form inquiries (contract §4.2), attached to a new or existing contact. */
export const leadInquiries = pgTable(
  'lead_inquiries',
  {
    id: serial('id').primaryKey(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    contactId: integer('contact_id')
      .notNull()
      .references(() => contacts.id, { onDelete: 'cascade' }),
    propertyId: integer('property_id').references(() => properties.id, { onDelete: 'set null' }),
    /** The person as they wrote in; the contact itself is not modified when it already existed. */
    contactName: text('contact_name').notNull(),
    contactEmail: text('contact_email'),
    contactPhone: text('contact_phone'),
    message: text('message').notNull(),
    source: text('source'),
    sourcePage: text('source_page'),
    /**
     * The answer's `outreach` (contract §4.2): `queued` (a delivery was made: its state says the
     * rest), `skipped` (the request said `outreach: false`) or `not_configured`. Null on inquiries
     * stored before it was kept (their delivery, if any, says `queued`; otherwise `not_configured`).
     */
    outreach: text('outreach', { enum: ['queued', 'skipped', 'not_configured'] }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    index('lead_inquiries_contact_idx').on(t.contactId),
    // Deleting a property sets property_id null on its inquiries (one look-up, not a table scan).
    index('lead_inquiries_property_idx').on(t.propertyId).where(sql`${t.propertyId} is not null`),
  ],
)

/** One webhook endpoint per business; the signing secret is encrypted at rest (AES-GCM, APP_SECRET). */
export const outreachEndpoints = pgTable('outreach_endpoints', {
  businessId: integer('business_id')
    .primaryKey()
    .references(() => businesses.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  secretEncrypted: text('secret_encrypted').notNull(),
  enabled: boolean('enabled').notNull().default(true),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})

export const outreachDeliveries = pgTable(
  'outreach_deliveries',
  {
    /** Public delivery id (`X-Webhook-Id`), stable across retries. */
    id: text('id').primaryKey(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    inquiryId: integer('inquiry_id')
      .notNull()
      .references(() => leadInquiries.id, { onDelete: 'cascade' }),
    payload: jsonb('payload').notNull(),
    /** pending → delivered (2xx) | failed (retries exhausted) | skipped (endpoint disabled or removed meanwhile). */
    state: text('state', { enum: ['pending', 'delivered', 'failed', 'skipped'] })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastStatusCode: smallint('last_status_code'),
    lastError: text('last_error'),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('outreach_deliveries_business_idx').on(t.businessId, t.createdAt),
    // Deleting an inquiry cascades to its deliveries.
    index('outreach_deliveries_inquiry_idx').on(t.inquiryId),
    // The sweep that re-enqueues pending deliveries whose job was lost reads only these rows.
    index('outreach_deliveries_pending_idx').on(t.createdAt).where(sql`${t.state} = 'pending'`),
  ],
)

export const outreachAttempts = pgTable(
  'outreach_attempts',
  {
    id: serial('id').primaryKey(),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => outreachDeliveries.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    statusCode: smallint('status_code'),
    latencyMs: integer('latency_ms').notNull(),
    error: text('error'),
    attemptedAt: timestamp('attempted_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  // Attempt numbers come from an atomic increment of outreach_deliveries.attempts, so they are unique.
  (t) => [uniqueIndex('outreach_attempts_delivery_attempt_uq').on(t.deliveryId, t.attempt)],
)
