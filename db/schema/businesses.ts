import { bigint, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core'

export const businesses = pgTable('businesses', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
  /** Storage key (private bucket) of the business's watermark PNG; null → a text mark with the name. */
  watermarkKey: text('watermark_key'),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  /**
   * Catalogue version (architecture.md "Catalogue version"): bumped by every transaction that
   * changes a published listing or its media (shared/listings/catalogue-rebuild.ts), so it keys
   * caches and the feed's ETag; `catalogue_changed_at` is when it last moved.
   */
  catalogueVersion: bigint('catalogue_version', { mode: 'number' }).notNull().default(0),
  catalogueChangedAt: timestamp('catalogue_changed_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})

export type Business = typeof businesses.$inferSelect
