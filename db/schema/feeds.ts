import { index, integer, pgTable, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { businesses } from './businesses'

/**
 * Portal feeds (contract §12): the URL's token is the credential. It is found by its SHA-256
 * (compared in constant time) and kept sealed with APP_SECRET only so `feed list` can show the URL again.
 */
export const feeds = pgTable(
  'feeds',
  {
    id: serial('id').primaryKey(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    format: text('format', { enum: ['kyero'] }).notNull(),
    tokenHash: text('token_hash').notNull(),
    tokenSealed: text('token_sealed').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [uniqueIndex('feeds_token_hash_uq').on(t.tokenHash), index('feeds_business_idx').on(t.businessId)],
)
