import { pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core'

export const businesses = pgTable('businesses', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
  /** Storage key (private bucket) of the business's watermark PNG; null → a text mark with the name. */
  watermarkKey: text('watermark_key'),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})

export type Business = typeof businesses.$inferSelect
