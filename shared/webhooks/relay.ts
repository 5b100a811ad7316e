/**
 * The outbox relay (architecture.md "Events through an outbox"). Each batch, in one transaction:
 * takes committed rows of event_outbox, turns each into an event with its id and its business's
 * next `sequence` (commit order: a later batch only ever holds events committed after the
 * earlier ones were read), creates the webhook deliveries of the enabled endpoints whose
 * `enabled_events` match, and deletes the outbox rows; then it wakes those endpoints' runners.
 *
 * It polls (every 20 ms while events come, backing off to 50 ms when idle, at once while batches
 * are full) instead of being woken by a
 * NOTIFY from each writing transaction: a NOTIFY takes a database-wide lock at commit, and with
 * it the write routes' p95 at c=16 doubled in `bun run bench events` (docs/events.md). An idle
 * poll is one probe of the empty outbox's primary key. The same loop wakes, once a
 * second, the runners of endpoints whose retries fell due. Several relays (one per worker
 * process running `webhook-delivery`) share the work with SKIP LOCKED.
 */
import { sequenceOutboxEvents } from '../../db/queries/events'
import { enabledEndpointsOf, endpointsWithDueDeliveries, insertDeliveries } from '../../db/queries/webhooks'
import type { Services } from '../platform/services'
import { canRead, matchesAny } from '../events/visibility'
import { wakeEndpoints } from './wake'

/** Events relayed per transaction. */
export const RELAY_BATCH = 1000
/**
 * Poll interval: 20 ms after a batch that found events, doubling while idle up to 50 ms (an idle
 * relay costs 20 index probes a second). A batch costs PostgreSQL ~1 ms whatever its size, plus
 * ~40 µs an event: at 2,500 events/s a 20 ms poll makes batches of ~60 at 43-51 µs of the relay's
 * PostgreSQL CPU an event, where a 5 ms poll would make batches of 17 at 77 µs; event-to-delivery
 * stays well inside its goal (`bun run bench events --phases 3`, docs/performance.md).
 */
export const RELAY_POLL_MS = 20
export const RELAY_IDLE_POLL_MS = 50
const DUE_POLL_MS = 1000
/**
 * A running relay starts each batch this many outbox keys below the highest it has taken, not
 * at the table's start: the rows it deleted stay in event_outbox_pkey as dead entries until a
 * vacuum, and every batch from the start stepped over all of them (1.8M between two vacuums at
 * 3,000 events/s with the maintenance's 10-minute vacuum). A row further behind (a transaction
 * that recorded its event and then stayed open that long) is taken by the batch from the start
 * that the relay runs every FULL_SCAN_MS.
 */
export const RELAY_KEY_LAG = 10_000
const FULL_SCAN_MS = 1000

type Deps = Pick<Services, 'database' | 'queues' | 'logger'>

/**
 * One batch of outbox rows with a key above `after` (0: all): returns how many events it relayed,
 * which endpoints got deliveries (already woken) and the highest outbox key it took.
 */
export async function relayOnce(
  deps: Deps,
  limit = RELAY_BATCH,
  after = 0,
): Promise<{ events: number; deliveries: number; endpoints: number[]; lastKey: number | null }> {
  const relayed = await deps.database.db.transaction(async (tx) => {
    const { events, lastKey } = await sequenceOutboxEvents(tx, limit, after)
    if (events.length === 0) return { events: 0, deliveries: 0, endpoints: [] as number[], lastKey }
    const endpoints = await enabledEndpointsOf(tx, [...new Set(events.map((e) => e.businessId))])
    const byBusiness = new Map<number, typeof endpoints>()
    for (const ep of endpoints) byBusiness.set(ep.businessId, [...(byBusiness.get(ep.businessId) ?? []), ep])
    const rows: { businessId: number; endpointId: number; eventId: string }[] = []
    for (const e of events) {
      // contract §15: what it subscribed to, of what the key that set it up can read.
      for (const ep of byBusiness.get(e.businessId) ?? [])
        if (matchesAny(e.type, ep.enabledEvents) && canRead(e.type, ep.eventScopes)) rows.push({ businessId: e.businessId, endpointId: ep.id, eventId: e.id })
    }
    const woken = await insertDeliveries(tx, rows)
    return { events: events.length, deliveries: rows.length, endpoints: woken, lastKey }
  })
  if (relayed.endpoints.length) {
    // Redis down: the deliveries are committed and due; the poller wakes their runners later.
    await wakeEndpoints(deps, relayed.endpoints).catch((error) =>
      deps.logger.warn('could not wake webhook runners; the poller will', { error: (error as Error).message }),
    )
  }
  return relayed
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
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = undefined
        resolve()
      }, ms)
      wake = () => {
        clearTimeout(timer)
        wake = undefined
        resolve()
      }
    })
  let idleMs = RELAY_POLL_MS
  let floor = 0
  let lastFullScan = 0
  const loop = (async () => {
    while (!stopped) {
      let full = false
      try {
        const fromStart = Date.now() - lastFullScan >= FULL_SCAN_MS
        if (fromStart) lastFullScan = Date.now()
        const batch = await relayOnce(deps, RELAY_BATCH, fromStart ? 0 : floor)
        if (batch.lastKey !== null) floor = Math.max(floor, batch.lastKey - RELAY_KEY_LAG)
        const n = batch.events
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
