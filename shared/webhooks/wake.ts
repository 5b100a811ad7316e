/**
 * Waking an endpoint's runner (a `webhook-delivery` job). BullMQ deduplication keyed by the
 * endpoint keeps one runner per endpoint at a time; with `keepLastIfActive`, a wake that comes
 * while the runner is active queues one more run right after it, so deliveries created while a
 * runner was finishing are never left waiting for the poller (architecture: no lost wake-up).
 */
import { JOBS } from '../platform/jobs'
import type { Queues } from '../platform/queues'
import { asRedisFailure } from '../platform/unavailable'

export const runnerDedupId = (endpointId: number) => `endpoint-${endpointId}`

export async function wakeEndpoints(deps: { queues: Queues }, endpointIds: Iterable<number>): Promise<void> {
  const ids = [...new Set(endpointIds)]
  if (ids.length === 0) return
  const def = JOBS['webhook-delivery']
  const options = deps.queues.optionsOf('webhook-delivery')
  try {
    await deps.queues.get(def.queue).addBulk(ids.map((endpointId) => ({
      name: def.name,
      data: { endpointId },
      opts: { ...options, deduplication: { id: runnerDedupId(endpointId), keepLastIfActive: true } },
    })))
  } catch (error) {
    throw asRedisFailure(error)
  }
}
