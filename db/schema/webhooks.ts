import { sql } from 'drizzle-orm'
import { index, integer, pgTable, serial, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { businesses } from './businesses'
import { events } from './events'

/** A business's webhook endpoint (contract §10.2); secrets are sealed with APP_SECRET. */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: serial('id').primaryKey(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    description: text('description'),
    enabledEvents: text('enabled_events').array().notNull(),
    /**
     * The read scopes (of leads:read, properties:read, properties:write) of the key that chose
     * the subscription, narrowed by any key that changed the URL since: the endpoint is sent only
     * the types these can read (contract §15 §10.1), whatever its wildcards match.
     */
    eventScopes: text('event_scopes').array().notNull(),
    status: text('status', { enum: ['enabled', 'disabled'] })
      .notNull()
      .default('enabled'),
    disabledReason: text('disabled_reason'),
    secretSealed: text('secret_sealed').notNull(),
    /** After a rotation the old secret keeps signing beside the new one until this time. */
    previousSecretSealed: text('previous_secret_sealed'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, mode: 'date' }),
    /** Start of the current run of failed attempts; null after a success. */
    failingSince: timestamp('failing_since', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('webhook_endpoints_business_idx').on(t.businessId)],
)

/** One event to one endpoint; retried until delivered, failed for good, or cancelled. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    endpointId: integer('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventId: text('event_id')
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    state: text('state', { enum: ['pending', 'delivered', 'failed', 'cancelled'] })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_endpoint_event_uq').on(t.endpointId, t.eventId),
    index('webhook_deliveries_event_idx').on(t.eventId),
    index('webhook_deliveries_pending_idx').on(t.nextAttemptAt).where(sql`${t.state} = 'pending'`),
    // An endpoint's runner claims its due deliveries, oldest due first (shared/webhooks/delivery.ts),
    // and the poller probes each enabled endpoint for one: without it a backlog of one endpoint
    // would be read through by every other endpoint's claim.
    index('webhook_deliveries_endpoint_due_idx').on(t.endpointId, t.nextAttemptAt).where(sql`${t.state} = 'pending'`),
  ],
)

/** Every attempt of a delivery, for GET /webhook_endpoints/{id}/deliveries. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: serial('id').primaryKey(),
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    endpointId: integer('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    statusCode: integer('status_code'),
    error: text('error'),
    latencyMs: integer('latency_ms').notNull(),
    attemptedAt: timestamp('attempted_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('webhook_attempts_endpoint_idx').on(t.endpointId, t.attemptedAt), index('webhook_attempts_delivery_idx').on(t.deliveryId)],
)
