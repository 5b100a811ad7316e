/**
 * Waking an endpoint's runner (a `webhook-delivery` job). BullMQ deduplication keyed by the
 * endpoint (the job catalog's `deduplication`) keeps one runner per endpoint at a time; with
 * `keepLastIfActive`, a wake that comes while the runner is active queues one more run right
 * after it, so deliveries created while a runner was finishing are never left waiting for the
 * poller (architecture: no lost wake-up).
 */
import type { Queues } from '../platform/queues'

export async function wakeEndpoints(deps: { queues: Queues }, endpointIds: Iterable<number>): Promise<void> {
  const ids = [...new Set(endpointIds)]
  if (ids.length === 0) return
  await deps.queues.enqueueBulk(
    'webhook-delivery',
    ids.map((endpointId) => ({ endpointId })),
  )
}
