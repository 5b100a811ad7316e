import { index, integer, pgTable, serial, smallint, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { apiKeys } from './api-keys'

/** api-spec §8: one row per (API key, operation, Idempotency-Key) for 24 hours. */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    id: serial('id').primaryKey(),
    apiKeyId: integer('api_key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    operation: text('operation').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    state: text('state', { enum: ['in_progress', 'done'] })
      .notNull()
      .default('in_progress'),
    responseStatus: smallint('response_status'),
    // The answer's body as the exact text that was sent (a replay is byte for byte; jsonb would reorder its keys).
    responseBody: text('response_body'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('idempotency_keys_scope_uq').on(t.apiKeyId, t.operation, t.key), index('idempotency_keys_created_idx').on(t.createdAt)],
)
