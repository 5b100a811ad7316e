/**
 * Catalogue and list reads on a streaming replica (`DATABASE_READ_URL`, contract §14) without
 * breaking read-your-writes. After a write the API stores the primary's WAL position in a
 * per-business marker in Redis (every API replica sees it; it lives only as long as the replica
 * may lag); a read of that business goes to the replica only once the replica's replay position,
 * checked every CHECK_INTERVAL_MS, has passed it. A replica that lags past the bound, stops
 * following or does not answer is bypassed, never waited for (read-routing.ts has the rules).
 */
import type IORedis from 'ioredis'
import type { Database } from '../../db/client'
import { currentWalLsn, replicaStatus } from '../../db/queries/replication'
import type { Logger } from './logger'
import { chooseRead, lsnToNumber, type ReadReason, type ReplicaView } from './read-routing'
import { isUnavailableError, unavailableCause } from './unavailable'

/** How often each process asks the replica where it is: a read-after-write within this goes to the primary. */
const CHECK_INTERVAL_MS = 200
const STALE_AFTER_MS = 2000

/** Keeps the larger LSN: concurrent writes may store their markers out of order. */
const KEEP_MAX = `local c = redis.call('GET', KEYS[1])
if (not c) or tonumber(c) < tonumber(ARGV[1]) then return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])`

export interface ReadRouterOptions {
  primary: Database
  replica: Database
  redis: IORedis
  keyPrefix: string
  maxLagMs: number
  logger: Logger
}

export class ReadRouter {
  private view: ReplicaView = { checkedAt: undefined, down: false, inRecovery: false, streaming: false, replayLsn: 0, lagMs: 0 }
  private timer: ReturnType<typeof setInterval> | undefined
  private checking = false
  /** Reads by target and reason since start (`db_reads_total` on /metrics). */
  readonly counts = new Map<string, number>()
  /** A marker that could not be stored in Redis: this process reads that business from the primary meanwhile. */
  private unrecorded = new Map<number, number>()
  private readonly markerTtlMs: number

  constructor(private options: ReadRouterOptions) {
    // A write older than this is on any replica that passes the lag check (bound + check age).
    this.markerTtlMs = options.maxLagMs + STALE_AFTER_MS + 1000
  }

  start(): void {
    void this.check()
    this.timer = setInterval(() => void this.check(), CHECK_INTERVAL_MS)
    this.timer.unref?.()
  }

  stop(): void {
    clearInterval(this.timer)
  }

  get replica(): Database {
    return this.options.replica
  }

  /** Runs `read` on the replica when it may serve `businessId`, else on the primary; a replica that fails mid-read is left for the primary. */
  async read<T>(businessId: number, read: (database: Database) => Promise<T>): Promise<T> {
    const choice = chooseRead(this.view, await this.marker(businessId), performance.now(), { maxLagMs: this.options.maxLagMs, staleAfterMs: STALE_AFTER_MS })
    if (choice.target === 'replica') {
      try {
        const result = await read(this.options.replica)
        this.count('replica', choice.reason)
        return result
      } catch (error) {
        if (!isUnavailableError(error)) throw error
        this.markDown(error)
        this.count('primary', 'down')
        return read(this.options.primary)
      }
    }
    this.count('primary', choice.reason)
    return read(this.options.primary)
  }

  /** After a write of `businessId` committed: its reads stay on the primary until the replica replays it. */
  async noteWrite(businessId: number): Promise<void> {
    let lsn: string
    try {
      lsn = await currentWalLsn(this.options.primary.sql)
    } catch {
      // The write is committed; without its position, this business reads from the primary for a while.
      this.unrecorded.set(businessId, performance.now() + this.markerTtlMs)
      return
    }
    try {
      await this.options.redis.eval(KEEP_MAX, 1, this.key(businessId), String(lsnToNumber(lsn)), String(this.markerTtlMs))
    } catch {
      this.unrecorded.set(businessId, performance.now() + this.markerTtlMs)
    }
  }

  /** The business's last write position; undefined when unknown (Redis did not answer). */
  private async marker(businessId: number): Promise<number | null | undefined> {
    const until = this.unrecorded.get(businessId)
    if (until !== undefined) {
      if (until > performance.now()) return undefined
      this.unrecorded.delete(businessId)
    }
    if (!this.fresh()) return null // the choice is the primary anyway: spare the round trip
    try {
      const value = await this.options.redis.get(this.key(businessId))
      return value === null ? null : Number(value)
    } catch {
      return undefined
    }
  }

  private fresh(): boolean {
    const v = this.view
    return (
      !v.down &&
      v.checkedAt !== undefined &&
      performance.now() - v.checkedAt <= STALE_AFTER_MS &&
      v.inRecovery &&
      v.streaming &&
      v.lagMs <= this.options.maxLagMs
    )
  }

  private key(businessId: number): string {
    return `${this.options.keyPrefix}:ryw:${businessId}`
  }

  private count(target: 'replica' | 'primary', reason: ReadReason): void {
    const key = `${target}\u0000${reason}`
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
  }

  private markDown(error: unknown): void {
    if (!this.view.down) this.options.logger.warn('read replica unreachable: reads go to the primary', unavailableCause(error))
    this.view = { ...this.view, down: true }
  }

  private async check(): Promise<void> {
    if (this.checking) return
    this.checking = true
    try {
      const s = await replicaStatus(this.options.replica.sql)
      if (this.view.down) this.options.logger.info('read replica reachable again')
      this.view = {
        checkedAt: performance.now(),
        down: false,
        inRecovery: s.inRecovery,
        streaming: s.streaming,
        replayLsn: s.replayLsn ? lsnToNumber(s.replayLsn) : 0,
        lagMs: s.lagMs,
      }
    } catch (error) {
      this.markDown(error)
    } finally {
      this.checking = false
    }
  }

  /** Prometheus lines: reads per target and reason, and the replica's last measured lag. */
  renderMetrics(): string {
    const lines = ['# HELP db_reads_total Catalogue and list reads by where they ran and why.', '# TYPE db_reads_total counter']
    for (const [key, n] of this.counts) {
      const [target, reason] = key.split('\u0000')
      lines.push(`db_reads_total{target="${target}",reason="${reason}"} ${n}`)
    }
    lines.push('# HELP db_replica_lag_seconds Replay lag of the read replica at its last check (-1: unreachable).', '# TYPE db_replica_lag_seconds gauge')
    lines.push(`db_replica_lag_seconds ${this.view.down || this.view.checkedAt === undefined ? -1 : this.view.lagMs / 1000}`)
    return lines.join('\n') + '\n'
  }
}

/** A read through the router when there is one, else on the primary. */
export function readFor<T>(deps: { database: Database; reads?: ReadRouter }, businessId: number, read: (database: Database) => Promise<T>): Promise<T> {
  return deps.reads ? deps.reads.read(businessId, read) : read(deps.database)
}
