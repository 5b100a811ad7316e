/**
 * Where a read goes (docs/operations.md "Read replica"): the replica when it is following the
 * primary closely enough and has replayed the business's last write, else the primary. Pure, so
 * every rule is tested without a replica.
 */

/** PostgreSQL's `X/Y` LSN text as one number of bytes (exact below 2^53: 8 PiB of WAL). */
export function lsnToNumber(lsn: string): number {
  const [hi, lo] = lsn.split('/')
  const n = parseInt(hi, 16) * 2 ** 32 + parseInt(lo, 16)
  if (!/^[0-9A-Fa-f]{1,8}\/[0-9A-Fa-f]{1,8}$/.test(lsn) || !Number.isSafeInteger(n)) throw new Error(`not an LSN: "${lsn}"`)
  return n
}

export interface ReplicaView {
  /** When the replica last answered the status check (ms, performance clock); undefined if never. */
  checkedAt: number | undefined
  /** The last check failed (connection refused, timeout): the replica is down. */
  down: boolean
  inRecovery: boolean
  streaming: boolean
  replayLsn: number
  lagMs: number
}

export type ReadReason = 'replica' | 'own-write' | 'lagging' | 'down' | 'unchecked' | 'not-following' | 'marker-unknown'

export interface ReadChoice {
  target: 'replica' | 'primary'
  reason: ReadReason
}

export interface RoutingBounds {
  maxLagMs: number
  /** A status older than this is not trusted (the check stopped answering). */
  staleAfterMs: number
}

/**
 * `marker`: the business's last write LSN (null: none recent; undefined: unknown because Redis
 * did not answer, so the write may be anywhere). Any doubt goes to the primary: it is never stale.
 */
export function chooseRead(view: ReplicaView, marker: number | null | undefined, now: number, bounds: RoutingBounds): ReadChoice {
  if (view.down) return { target: 'primary', reason: 'down' }
  if (view.checkedAt === undefined || now - view.checkedAt > bounds.staleAfterMs) return { target: 'primary', reason: 'unchecked' }
  if (!view.inRecovery || !view.streaming) return { target: 'primary', reason: 'not-following' }
  if (view.lagMs > bounds.maxLagMs) return { target: 'primary', reason: 'lagging' }
  if (marker === undefined) return { target: 'primary', reason: 'marker-unknown' }
  // The replay position only grows, so a value read a moment ago can only under-state it.
  if (marker !== null && marker > view.replayLsn) return { target: 'primary', reason: 'own-write' }
  return { target: 'replica', reason: 'replica' }
}
