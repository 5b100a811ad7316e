/**
 * What `cli outreach` prints (contract §4.2, §8). The signing secret is in none of these: only
 * `setOutreachEndpoint` returns it, beside the endpoint, once.
 */
import { Type as T, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, literalUnion } from '../platform/schemas'

/** pending → delivered (2xx) | failed (attempts exhausted) | skipped (endpoint disabled or removed meanwhile). */
export const DELIVERY_STATES = ['pending', 'delivered', 'failed', 'skipped'] as const

export const OutreachEndpoint = T.Object(
  {
    business_id: T.Integer(),
    url: T.String(),
    enabled: T.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'OutreachEndpoint' },
)
export type OutreachEndpoint = Static<typeof OutreachEndpoint>

export const OutreachAttempt = T.Object(
  {
    attempt: T.Integer({ minimum: 1 }),
    attempted_at: Timestamp,
    status_code: Nullable(T.Integer()),
    latency_ms: T.Integer({ minimum: 0 }),
    error: Nullable(T.String()),
  },
  { title: 'OutreachAttempt' },
)
export type OutreachAttempt = Static<typeof OutreachAttempt>

export const OutreachDelivery = T.Object(
  {
    id: T.String(),
    inquiry_id: T.Integer(),
    state: literalUnion(DELIVERY_STATES),
    attempts: T.Integer({ minimum: 0 }),
    last_status_code: Nullable(T.Integer()),
    last_error: Nullable(T.String()),
    next_attempt_at: Nullable(Timestamp),
    created_at: Timestamp,
    delivered_at: Nullable(Timestamp),
    attempt_log: T.Array(OutreachAttempt),
  },
  { title: 'OutreachDelivery' },
)
export type OutreachDelivery = Static<typeof OutreachDelivery>
