/**
 * Outreach domain rules shared by the API (creates deliveries), the worker (sends them) and the
 * CLI (configures endpoints): delivery ids, the delivery body of contract §8, where a secret box
 * is bound, and the retry schedule.
 */
import { randomBytes } from 'node:crypto'
import { Type as T, type Static } from '@sinclair/typebox'

/** Public delivery id, sent as `X-Webhook-Id` and stable across retries. */
export function newDeliveryId(): string {
  return `dlv_${randomBytes(12).toString('hex')}`
}

/** The secret box of a business's endpoint opens only for that business (AAD). */
export const endpointSecretContext = (businessId: number) => `outreach-endpoint:${businessId}`

export const DeliveryBody = T.Object(
  {
    type: T.Literal('inquiry.created'),
    delivery_id: T.String(),
    created_at: T.String({ format: 'date-time' }),
    inquiry_id: T.Integer(),
    lead_id: T.Integer(),
    lead_created: T.Boolean(),
    property_id: T.Union([T.Integer(), T.Null()]),
    contact: T.Object({ name: T.String(), email: T.Union([T.String(), T.Null()]), phone: T.Union([T.String(), T.Null()]) }),
    message: T.String(),
    source: T.Union([T.String(), T.Null()]),
    source_page: T.Union([T.String(), T.Null()]),
  },
  { title: 'OutreachDeliveryBody' },
)
export type DeliveryBody = Static<typeof DeliveryBody>

/**
 * The JSON text POSTed to the endpoint, keys in the contract's order. The stored payload is
 * jsonb (which reorders keys), so the text is rebuilt here: the same bytes on every retry.
 */
export function deliveryBodyText(p: DeliveryBody): string {
  const body: DeliveryBody = {
    type: 'inquiry.created',
    delivery_id: p.delivery_id,
    created_at: p.created_at,
    inquiry_id: p.inquiry_id,
    lead_id: p.lead_id,
    lead_created: p.lead_created,
    property_id: p.property_id,
    contact: { name: p.contact.name, email: p.contact.email, phone: p.contact.phone },
    message: p.message,
    source: p.source,
    source_page: p.source_page,
  }
  return JSON.stringify(body)
}

/**
 * Wait before retry number `attemptsMade` (1 after the first failure): base·2^(n−1), capped.
 * With the defaults (30 s, 6 h) and 20 attempts: 30 s, 1, 2, 4, 8, 16, 32, 64, 128, 256 min,
 * then 6 h nine times — about 62.5 h from the first to the last attempt (contract §4.2: ≥ 24 h).
 */
export function outreachBackoffMs(attemptsMade: number, baseMs: number, maxMs: number): number {
  const n = Math.max(1, attemptsMade)
  // 2^(n−1) overflows nothing for n ≤ 1000; the cap keeps the tail useful.
  return Math.min(baseMs * 2 ** Math.min(n - 1, 50), maxMs)
}
