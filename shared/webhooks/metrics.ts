/**
 * Delivery figures for /metrics (contract §10.2 operations): attempts by outcome and their
 * latency (from Redis, shared by every worker), and per queue the age of the oldest event still
 * waiting to be delivered (from PostgreSQL: the outbox's unrelayed events and pending webhook
 * deliveries for `webhook-delivery`, pending inquiry deliveries for `outreach`).
 */
import { oldestUnrelayedAgeSeconds } from '../../db/queries/events'
import { oldestPendingOutreachAgeSeconds } from '../../db/queries/outreach'
import { oldestUndeliveredAgeSeconds } from '../../db/queries/webhooks'
import type { Services } from '../platform/services'
import { readDeliveryStats, type DeliveryStats } from './stats'

export interface DeliveryFigures extends DeliveryStats {
  oldestUndeliveredSeconds: { 'webhook-delivery': number; outreach: number }
}

export async function deliveryFigures(deps: Pick<Services, 'database' | 'queues'>): Promise<DeliveryFigures> {
  const { db } = deps.database
  const [stats, unrelayed, pending, outreach] = await Promise.all([
    readDeliveryStats(deps.queues.connection, deps.queues.prefix),
    oldestUnrelayedAgeSeconds(db),
    oldestUndeliveredAgeSeconds(db),
    oldestPendingOutreachAgeSeconds(db),
  ])
  return { ...stats, oldestUndeliveredSeconds: { 'webhook-delivery': Math.max(unrelayed, pending), outreach } }
}
