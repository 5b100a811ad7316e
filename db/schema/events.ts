import { sql } from 'drizzle-orm'
import { bigint, index, integer, json, pgSequence, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { businesses } from './businesses'

/**
 * Insertion order of events not yet sequenced: a row is written with `sequence` =
 * nextval − 2^62 (negative, unique, increasing), which the relay replaces by the business's next
 * sequence (shared/webhooks/relay.ts). A sequence is non-transactional: taking a value locks nothing.
 */
export const eventsPendingOrder = pgSequence('events_pending_order_seq')

/**
 * The outbox of observable changes (contract §10.1): each row is written in the transaction of
 * the change it describes, with a provisional negative `sequence`; the relay then gives it the
 * business's next sequence from event_counters, in batches, so `sequence` increases strictly per
 * business in commit order without any lock held by the writing transaction (docs/events.md).
 */
export const events = pgTable(
  'events',
  {
    /** Public id, `evt_<opaque>`. */
    id: text('id').primaryKey(),
    /** Not a foreign key (migration 0027): a business's deletion deletes its events by trigger. */
    businessId: integer('business_id').notNull(),
    type: text('type').notNull(),
    sequence: bigint('sequence', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** `{object, previous_attributes?}` as published. */
    data: json('data').notNull(),
    /** Set once the relay has turned the event into its webhook deliveries. */
    relayedAt: timestamp('relayed_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    // GET /events?after= pages by (business, sequence); the relay reads new rows in that order.
    uniqueIndex('events_business_sequence_uq').on(t.businessId, t.sequence),
    // The 30-day retention sweep deletes by age.
    index('events_created_idx').on(t.createdAt),
    // The relay's queue of events not yet turned into deliveries.
    index('events_unrelayed_idx').on(t.createdAt).where(sql`${t.relayedAt} is null`),
  ],
)

export const eventCounters = pgTable('event_counters', {
  businessId: integer('business_id').primaryKey().references(() => businesses.id, { onDelete: 'cascade' }),
  lastSequence: bigint('last_sequence', { mode: 'number' }).notNull(),
})

export type EventRow = typeof events.$inferSelect
