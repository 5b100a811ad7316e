/**
 * The outbox relay (architecture.md "Events through an outbox"). Each batch, in one transaction:
 * takes committed rows of event_outbox, turns each into an event with its id and its business's
 * next `sequence` (commit order: a later batch only ever holds events committed after the
 * earlier ones were read), creates the webhook deliveries of the enabled endpoints whose
 * `enabled_events` match, and deletes the outbox rows; then it wakes those endpoints' runners.
 *
 * It polls (every 5 ms while events come, backing off to 50 ms when idle, at once while batches
 * are full) instead of being woken by a
 * NOTIFY from each writing transaction: a NOTIFY takes a database-wide lock at commit, and with
 * it the write routes' p95 at c=16 doubled in `bun run bench events` (docs/events.md). An idle
 * poll is one probe of the empty outbox's primary key. The same loop wakes, once a
 * second, the runners of endpoints whose retries fell due. Several relays (one per worker
 * process running `webhook-delivery`) share the work with SKIP LOCKED.
 */
import { sequenceOutboxEvents, takeRelayTurn } from '../../db/queries/events'
import { enabledEndpointsOf, endpointsWithDueDeliveries, insertDeliveries } from '../../db/queries/webhooks'
import type { Services } from '../platform/services'
import { matchesAny } from '../events/visibility'
import { wakeEndpoints } from './wake'

/** Events relayed per transaction. */
export const RELAY_BATCH = 1000
/**
 * Poll interval: 5 ms after a batch that found events, doubling while idle up to 50 ms (an idle
 * relay costs 20 index probes a second; a busy one adds ~3 ms to the event-to-delivery latency
 * and keeps batches small, so deliveries flow rather than arrive in bursts).
 */
export const RELAY_POLL_MS = 5
export const RELAY_IDLE_POLL_MS = 50
const DUE_POLL_MS = 1000

type Deps = Pick<Services, 'database' | 'queues' | 'logger'>

/** One batch: returns how many events it relayed and which endpoints got deliveries (already woken). */
export async function relayOnce(deps: Deps, limit = RELAY_BATCH): Promise<{ events: number; deliveries: number; endpoints: number[] }> {
  const relayed = await deps.database.db.transaction(async (tx) => {
    // One relay batch at a time across every process: two batches upserting the same
    // businesses' counters could deadlock; taking turns costs nothing next to the batch.
    await takeRelayTurn(tx)
    const events = await sequenceOutboxEvents(tx, limit)
    if (events.length === 0) return { events: 0, deliveries: 0, endpoints: [] as number[] }
    const endpoints = await enabledEndpointsOf(tx, [...new Set(events.map((e) => e.businessId))])
    const byBusiness = new Map<number, typeof endpoints>()
    for (const ep of endpoints) byBusiness.set(ep.businessId, [...(byBusiness.get(ep.businessId) ?? []), ep])
    const rows: { businessId: number; endpointId: number; eventId: string }[] = []
    for (const e of events) {
      for (const ep of byBusiness.get(e.businessId) ?? []) if (matchesAny(e.type, ep.enabledEvents)) rows.push({ businessId: e.businessId, endpointId: ep.id, eventId: e.id })
    }
    const woken = await insertDeliveries(tx, rows)
    return { events: events.length, deliveries: rows.length, endpoints: woken }
  })
  if (relayed.endpoints.length) {
    // Redis down: the deliveries are committed and due; the poller wakes their runners later.
    await wakeEndpoints(deps, relayed.endpoints).catch((error) => deps.logger.warn('could not wake webhook runners; the poller will', { error: (error as Error).message }))
  }
  return relayed
}

/** Relays until nothing is left (tests and tools that need every recorded event sequenced now). */
export async function relayAll(deps: Deps): Promise<number> {
  let total = 0
  for (let n = RELAY_BATCH; n >= RELAY_BATCH; total += n) n = (await relayOnce(deps)).events
  return total
}

/** Wakes the runners of endpoints with due deliveries (retries whose time came, leases that ended). */
export async function wakeDueEndpoints(deps: Deps): Promise<number> {
  const ids = await endpointsWithDueDeliveries(deps.database.db, 10_000)
  await wakeEndpoints(deps, ids)
  return ids.length
}

export interface RunningRelay {
  stop(): Promise<void>
}

export function startWebhookRelay(deps: Deps, options: { pollMs?: number } = {}): RunningRelay {
  let stopped = false
  let failures = 0
  let lastDueCheck = 0
  let wake: (() => void) | undefined
  const sleep = (ms: number) => new Promise<void>((resolve) => {
    const timer = setTimeout(() => (wake = undefined, resolve()), ms)
    wake = () => (clearTimeout(timer), (wake = undefined), resolve())
  })
  let idleMs = RELAY_POLL_MS
  const loop = (async () => {
    while (!stopped) {
      let full = false
      try {
        const n = (await relayOnce(deps)).events
        full = n >= RELAY_BATCH
        idleMs = n > 0 ? (options.pollMs ?? RELAY_POLL_MS) : Math.min(RELAY_IDLE_POLL_MS, idleMs * 2)
        if (Date.now() - lastDueCheck >= DUE_POLL_MS) {
          lastDueCheck = Date.now()
          await wakeDueEndpoints(deps)
        }
        failures = 0
      } catch (error) {
        // PostgreSQL or Redis unreachable: the next round tries again, a little later each time.
        if (failures++ % 50 === 0) deps.logger.warn('webhook relay failed; retrying', { error: (error as Error).message })
      }
      if (!full && !stopped) await sleep(failures ? Math.min(1000, RELAY_POLL_MS * 2 ** Math.min(failures, 8)) : idleMs)
    }
  })()
  return {
    async stop() {
      stopped = true
      wake?.()
      await loop
    },
  }
}
