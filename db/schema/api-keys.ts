import { sql } from 'drizzle-orm'
import { check, index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core'
import { businesses } from './businesses'

export const apiKeys = pgTable(
  'api_keys',
  {
    id: serial('id').primaryKey(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    /** Public identifier: appears in the key itself, in logs and in `/me`. */
    keyId: text('key_id').notNull().unique(),
    /** Hex SHA-256 of the secret; the secret itself is never stored. */
    secretHash: text('secret_hash').notNull(),
    name: text('name'),
    scopes: text('scopes').array().notNull(),
    /** `secret` (server side) or `publishable` (safe to show in a page: contract §16.1). */
    kind: text('kind').notNull().default('secret'),
    /** Publishable keys only: the origins a browser may use the key from, as `scheme://host[:port]`. */
    origins: text('origins').array(),
    /** Publishable keys only: `N/s`, `N/min` or `N/h` per client address, and for the whole key. */
    ratePerIp: text('rate_per_ip'),
    rate: text('rate'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => {
    // A publishable key carries exactly the ingest scope, its origins and its two rates; a secret key none of them.
    const secret = sql`(${t.kind} = 'secret' and ${t.origins} is null and ${t.ratePerIp} is null and ${t.rate} is null)`
    const rates = sql`${t.ratePerIp} is not null and ${t.rate} is not null`
    const publishable = sql`(${t.kind} = 'publishable' and ${t.scopes} = array['leads:ingest'] and cardinality(${t.origins}) between 1 and 20 and ${rates})`
    return [index('api_keys_business_idx').on(t.businessId), check('api_keys_kind_check', sql`${secret} or ${publishable}`)]
  },
)

export type ApiKeyRow = typeof apiKeys.$inferSelect
