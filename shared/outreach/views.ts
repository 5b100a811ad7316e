/** Outreach rows in the shapes of schemas.ts (what `cli outreach` prints). */
import type { DeliveryWithAttempts, OutreachEndpointRow } from '../../db/queries/outreach'
import type { OutreachDelivery, OutreachEndpoint } from './schemas'

export const endpointView = (e: OutreachEndpointRow): OutreachEndpoint => ({
  business_id: e.businessId,
  url: e.url,
  enabled: e.enabled,
  created_at: e.createdAt.toISOString(),
  updated_at: e.updatedAt.toISOString(),
})

export const deliveryView = (d: DeliveryWithAttempts): OutreachDelivery => ({
  id: d.id,
  inquiry_id: d.inquiryId,
  state: d.state,
  attempts: d.attempts,
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
  created_at: d.createdAt.toISOString(),
  delivered_at: d.deliveredAt?.toISOString() ?? null,
  attempt_log: d.attemptRows.map((a) => ({
    attempt: a.attempt,
    attempted_at: a.attemptedAt.toISOString(),
    status_code: a.statusCode,
    latency_ms: a.latencyMs,
    error: a.error,
  })),
})
