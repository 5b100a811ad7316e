import { sql } from 'drizzle-orm'
import { bigint, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { businesses } from './businesses'

/**
 * The outbox of observable changes (contract §10.1): each row is written in the transaction of
 * the change it describes. `sequence` increases strictly per business in commit order (it is
 * allocated from event_counters as the transaction's last statement, so the counter row's lock
 * is held only until commit).
 */
export const events = pgTable(
  'events',
  {
    /** Public id, `evt_<opaque>`. */
    id: text('id').primaryKey(),
    businessId: integer('business_id').notNull().references(() => businesses.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    sequence: bigint('sequence', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** `{object, previous_attributes?}` as published. */
    data: jsonb('data').notNull(),
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
