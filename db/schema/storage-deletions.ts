import { bigserial, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

/**
 * Objects to delete from storage, written in the transaction that stops referencing them (an
 * image or video deleted, a listing deleted, an original no longer needed), so a crash can never
 * leave a public copy behind: the storage-cleanup worker deletes them and removes the row,
 * retried until done (contract §9.1, §9.4). `prefix` rows delete every object under a prefix.
 */
export const storageDeletions = pgTable(
  'storage_deletions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    area: text('area', { enum: ['private', 'public'] }).notNull(),
    key: text('key').notNull(),
    kind: text('kind', { enum: ['object', 'prefix'] })
      .notNull()
      .default('object'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('storage_deletions_created_idx').on(t.createdAt)],
)
