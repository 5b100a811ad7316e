import { index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core'
import { businesses } from './businesses'

export const apiKeys = pgTable(
  'api_keys',
  {
    id: serial('id').primaryKey(),
    businessId: integer('business_id').notNull().references(() => businesses.id, { onDelete: 'cascade' }),
    /** Public identifier: appears in the key itself, in logs and in `/me`. */
    keyId: text('key_id').notNull().unique(),
    /** Hex SHA-256 of the secret; the secret itself is never stored. */
    secretHash: text('secret_hash').notNull(),
    name: text('name'),
    scopes: text('scopes').array().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('api_keys_business_idx').on(t.businessId)],
)

export type ApiKeyRow = typeof apiKeys.$inferSelect
