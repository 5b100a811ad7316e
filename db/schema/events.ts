import { sql } from 'drizzle-orm'
import { bigint, bigserial, index, integer, json, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { businesses } from './businesses'

/**
 * The outbox (contract §10.1): each row is written in the transaction of the change it records,
 * and nothing else is done there: no id, no sequence, no JSON rendering, one index. The relay
 * (shared/webhooks/relay.ts) moves committed rows into `events` in batches, giving each its
 * business's next sequence, so the writing transaction holds no lock for it and pays for one
 * small row (docs/events.md "Events (§10.1)").
 */
export const eventOutbox = pgTable('event_outbox', {
  /** Recording order: the relay takes rows in this order, and keeps it within a business. */
  n: bigserial('n', { mode: 'number' }).primaryKey(),
  /** Not a foreign key, as events.business_id (migration 0027). */
  businessId: integer('business_id').notNull(),
  type: text('type').notNull(),
  /** When the change was recorded (the statement's clock): the event's `created_at`. */
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().default(sql`clock_timestamp()`),
  /** `{object, previous_attributes?}` as the service wrote it; null for a lead.created of the contacts trigger. */
  data: json('data'),
  /**
   * lead.created from the contacts trigger: the inserted row as row_to_json wrote it, turned
   * into the Lead object by lead_created_data() when relayed (migration 0028).
   */
  contact: json('contact'),
})

/**
 * The published events (contract §10.1), written by the relay only: each has its business's
 * `sequence`, strictly increasing in the order the relay took them from the outbox (after
 * commit), and is what GET /events, deliveries, exports and erasure read.
 */
export const events = pgTable(
  'events',
  {
    /** Public id, `evt_<opaque>`, minted by new_event_id() when relayed. */
    id: text('id').primaryKey(),
    /** Not a foreign key (migration 0027): a business's deletion deletes its events by trigger. */
    businessId: integer('business_id').notNull(),
    type: text('type').notNull(),
    sequence: bigint('sequence', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** `{object, previous_attributes?}` as published. */
    data: json('data').notNull(),
  },
  (t) => [
    // GET /events?after= pages by (business, sequence).
    uniqueIndex('events_business_sequence_uq').on(t.businessId, t.sequence),
    // The 30-day retention sweep deletes by age.
    index('events_created_idx').on(t.createdAt),
  ],
)

export const eventCounters = pgTable('event_counters', {
  businessId: integer('business_id')
    .primaryKey()
    .references(() => businesses.id, { onDelete: 'cascade' }),
  lastSequence: bigint('last_sequence', { mode: 'number' }).notNull(),
})

export type EventRow = typeof events.$inferSelect
