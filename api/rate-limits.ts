/**
 * A publishable key's two limits (contract §16.4): `rate_per_ip` per client address and `rate`
 * for the whole key, counted in Redis so they hold across every API replica. The counting is
 * rate-limiter-flexible's (a fixed window per limit, one atomic Lua call per counter); what is
 * ours is how the two are combined, kept cheap and kept fair:
 *
 * - Both counters are asked in the same turn of the event loop on a connection with ioredis's
 *   auto-pipelining, so they travel to Redis in one write and come back in one read: at most one
 *   round trip per request (fewer under load, where many requests share a write).
 * - A large quota (200 points per window and more) is taken from Redis a slice (1%) at a time and
 *   spent from memory: a busy key costs Redis one call per slice, not per request; a small one is
 *   counted request by request, exactly (`take`). Counting cost 28 µs of API CPU and 15 µs of
 *   Redis CPU per request request by request, a fifth of an ingest's cost on 2 cores.
 * - A request refused by one limit gives its point back to the other, so a client over its own
 *   limit cannot use up the key's budget that every other visitor shares.
 * - A client or key seen over its limit is refused from memory until its window ends, without a
 *   Redis call (rate-limiter-flexible's in-memory block): a flood costs Redis nothing.
 * - Redis unreachable or slow (`LIMIT_TIMEOUT_MS`): each process counts the same limits in memory
 *   instead (rate-limiter-flexible's insurance limiter) and the request goes on. Fail open to
 *   per-process limits, on purpose: the ingest path itself keeps accepting leads while Redis is
 *   down (it falls back to PostgreSQL), refusing every visitor of every landing page for a Redis
 *   outage would lose exactly the leads the service exists for, and the origin check and the
 *   honeypot do not need Redis. The exposure is bounded: N replicas allow at most N times a limit
 *   while the outage lasts (docs/forms.md "When Redis is down").
 */
import type IORedis from 'ioredis'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible'
import type { BrowserAccess } from '../shared/access/key-store'
import type { Rate } from '../shared/access/publishable'

/** Past this a limiter call counts as failed and the process's own count decides (the ingest's own Redis bound is 1.5 s). */
export const LIMIT_TIMEOUT_MS = 250

export type LimitName = 'per-ip' | 'per-key'

export interface LimitOutcome {
  /** The limit that refused the request, if one did. */
  exceeded?: LimitName
  /** Seconds until the refusing limit lets a request through again (Retry-After). */
  retryAfter?: number
  /** `RateLimit-Policy` and `RateLimit` (IETF httpapi draft: Structured Field lists of named policies). */
  headers: Record<string, string>
}

export interface LimiterStats {
  /** Requests whose limits were checked. */
  checks: number
  /** Checks answered from memory: a client or key already known to be over its limit. */
  blockedInMemory: number
  /** Counter calls answered by the in-process fallback because Redis failed or was too slow. */
  fallbacks: number
}

/** Counts its uses: the in-process count stands in for Redis only when Redis failed. */
class FallbackLimiter extends RateLimiterMemory {
  constructor(
    opts: ConstructorParameters<typeof RateLimiterMemory>[0],
    private readonly used: () => void,
  ) {
    super(opts)
  }
  override consume(key: string | number, points?: number, options?: Parameters<RateLimiterMemory['consume']>[2]) {
    this.used()
    return super.consume(key, points, options)
  }
  override reward(key: string | number, points?: number, options?: Parameters<RateLimiterMemory['reward']>[2]) {
    this.used()
    return super.reward(key, points, options)
  }
}

interface Pair {
  ip: RateLimiterRedis
  key: RateLimiterRedis
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000))

export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterRedis>()
  /** Slices of large quotas this process took from Redis and spends from memory (see `take`). */
  private readonly leases = new Map<string, Lease>()
  readonly stats: LimiterStats = { checks: 0, blockedInMemory: 0, fallbacks: 0 }

  /** `redis`: a connection of the limits' own (auto-pipelining, command timeout), closed by `close()`. */
  constructor(
    private readonly redis: IORedis,
    private readonly prefix: string,
  ) {}

  static connect(shared: IORedis, prefix: string): RateLimits {
    const redis = shared.duplicate({ enableAutoPipelining: true, commandTimeout: LIMIT_TIMEOUT_MS, connectionName: 'rate-limits' })
    redis.on('error', () => {})
    return new RateLimits(redis, prefix)
  }

  /** Resolves once the connection is up (until then each process counts alone), within `timeoutMs`. */
  async ready(timeoutMs = 3000): Promise<void> {
    if (this.redis.status === 'ready') return
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Redis not ready within ${timeoutMs} ms`)), timeoutMs)
      this.redis.once('ready', () => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  close(): void {
    this.redis.disconnect()
  }

  /**
   * Counts one request against both limits; refused when either is over. Answered synchronously
   * when memory decides (a busy key's slices, or a known block): the hot path then costs no
   * promise and no turn of the event loop; a promise only when a counter goes to Redis.
   */
  consume(keyId: string, access: BrowserAccess, address: string): LimitOutcome | Promise<LimitOutcome> {
    this.stats.checks++
    const pair = this.pair(access)
    const { ip, key } = pair
    const ipKey = `${keyId}:${address}`
    // The counters' own names (rate-limiter-flexible's `getKey`), made once for the block and the slice.
    const ipCounter = ip.getKey(ipKey)
    const keyCounter = key.getKey(keyId)
    const ipBlocked = blockedMs(ip, ipCounter)
    const keyBlocked = ipBlocked > 0 ? 0 : blockedMs(key, keyCounter)
    if (ipBlocked > 0 || keyBlocked > 0) {
      // Known from memory: no Redis call, so the fields name only the limit that refuses.
      this.stats.blockedInMemory++
      const [name, ms] = ipBlocked > 0 ? (['per-ip', ipBlocked] as const) : (['per-key', keyBlocked] as const)
      return {
        exceeded: name,
        retryAfter: Math.max(1, seconds(ms)),
        headers: { 'ratelimit-policy': pair.policy, ratelimit: `"${name}";r=0;t=${seconds(ms)}` },
      }
    }
    // Both from slices in memory (a busy key): no promise, no Redis.
    const now = Date.now()
    const ipLeased = this.fromLease(ipCounter, access.ratePerIp, now)
    const keyLeased = this.fromLease(keyCounter, access.rate, now)
    if (ipLeased && keyLeased) return this.outcome(access, ipLeased, keyLeased)
    return Promise.all([ipLeased ?? this.take(ip, ipCounter, access.ratePerIp, ipKey), keyLeased ?? this.take(key, keyCounter, access.rate, keyId)]).then(
      ([ipRes, keyRes]) => {
        // A point spent on a request the other limit refused goes back (see the file comment).
        const ipState = keyRes.refused && !ipRes.refused ? this.giveBack(ip, ipCounter, access.ratePerIp, ipKey, ipRes.res) : ipRes.res
        const keyState = ipRes.refused && !keyRes.refused ? this.giveBack(key, keyCounter, access.rate, keyId, keyRes.res) : keyRes.res
        return this.outcome(access, { refused: ipRes.refused, res: ipState }, { refused: keyRes.refused, res: keyState })
      },
    )
  }

  private outcome(access: BrowserAccess, ip: Settled, key: Settled): LimitOutcome {
    const headers = this.headers(access, ip.res, key.res)
    if (ip.refused) return { exceeded: 'per-ip', retryAfter: Math.max(1, seconds(ip.res.msBeforeNext)), headers }
    if (key.refused) return { exceeded: 'per-key', retryAfter: Math.max(1, seconds(key.res.msBeforeNext)), headers }
    return { headers }
  }

  /**
   * One point of a counter. A small quota (under 2 × LEASE_SHARE points per window) is counted in
   * Redis request by request: exact. A larger one is taken from Redis a slice at a time (1/LEASE_SHARE
   * of the quota, atomically, so the replicas still share one count) and spent from memory: a
   * busy key costs Redis one call per slice instead of one per request. The price is precision at
   * the window's end: a slice a process has not spent by then was counted all the same, so the
   * others may be refused up to a slice per replica early (≤ 1% of the quota each).
   */
  /** A point from this process's slice of the counter `id`, when it has one left in the current window. */
  private fromLease(id: string, rate: Rate, now: number): Settled | undefined {
    const size = leaseSize(rate)
    if (size === 1) return undefined
    const lease = this.leases.get(id)
    if (!lease || lease.available <= 0) return undefined
    if (now >= lease.until) return undefined
    lease.available--
    return { refused: false, res: { consumedPoints: lease.spentBefore + size - lease.available, msBeforeNext: lease.until - now } }
  }

  /** `id` is the counter's name (`limiter.getKey(k)`): the slices' map is keyed by it. */
  private async take(limiter: RateLimiterRedis, id: string, rate: Rate, k: string): Promise<Settled> {
    const size = leaseSize(rate)
    if (size === 1) return settle(limiter.consume(k))
    // Spent meanwhile by a request that went to Redis for the other counter: still this slice's.
    const leased = this.fromLease(id, rate, Date.now())
    if (leased) return leased
    const taken = await settle(limiter.consume(k, size))
    const overBy = taken.res.consumedPoints - rate.points
    // Over the quota: the part of the slice that still fits is granted, the rest given back.
    const granted = taken.refused ? Math.max(0, size - overBy) : size
    if (granted < size) void limiter.reward(k, size - granted).catch(() => {})
    if (granted === 0) return { refused: true, res: { consumedPoints: rate.points + 1, msBeforeNext: taken.res.msBeforeNext } }
    if (this.leases.size > 10_000) this.evictLeases(Date.now())
    const spentBefore = taken.res.consumedPoints - size
    this.leases.set(id, { available: granted - 1, until: Date.now() + taken.res.msBeforeNext, spentBefore })
    return { refused: false, res: { consumedPoints: spentBefore + 1, msBeforeNext: taken.res.msBeforeNext } }
  }

  /** Returns a point (from memory for a slice, else to Redis without waiting); the answer's fields already show it returned. */
  private giveBack(limiter: RateLimiterRedis, id: string, rate: Rate, k: string, res: Counted): Counted {
    const lease = leaseSize(rate) > 1 ? this.leases.get(id) : undefined
    if (lease) lease.available++
    else void limiter.reward(k).catch(() => {})
    return { consumedPoints: Math.max(0, res.consumedPoints - 1), msBeforeNext: res.msBeforeNext }
  }

  private evictLeases(now: number): void {
    for (const [id, lease] of this.leases) if (lease.until <= now) this.leases.delete(id)
  }

  /** The limits' state without counting a request (an answer refused before counting still carries the fields). */
  async peek(keyId: string, access: BrowserAccess, address: string): Promise<Record<string, string>> {
    const { ip, key } = this.pair(access)
    const [ipState, keyState] = await Promise.all([this.peekOne(ip, `${keyId}:${address}`), this.peekOne(key, keyId)])
    return this.headers(access, ipState, keyState)
  }

  private async peekOne(limiter: RateLimiterRedis, k: string): Promise<RateLimiterRes | null> {
    return limiter.get(k).catch(() => null)
  }

  /** Per key settings object (the key store keeps one per key for its cache's life): no lookup by name per request. */
  private readonly pairs = new WeakMap<BrowserAccess, Pair & { policy: string }>()

  private pair(access: BrowserAccess): Pair & { policy: string } {
    let pair = this.pairs.get(access)
    if (!pair) {
      pair = { ip: this.limiter('ip', access.ratePerIp), key: this.limiter('key', access.rate), policy: policyOf(access) }
      this.pairs.set(access, pair)
    }
    return pair
  }

  /** One limiter per (counter, rate): keys of the same rate share it; its Redis keys carry the key id. */
  private limiter(counter: 'ip' | 'key', rate: Rate): RateLimiterRedis {
    const name = `${counter}:${rate.text}`
    let limiter = this.limiters.get(name)
    if (!limiter) {
      const keyPrefix = `${this.prefix}:ratelimit:${counter}:${rate.text}`
      const opts = { keyPrefix, points: rate.points, duration: rate.seconds }
      limiter = new RateLimiterRedis({
        ...opts,
        storeClient: this.redis,
        // Not ready (reconnecting): straight to the fallback, no command waits for a connection.
        rejectIfRedisNotReady: true,
        // Over the limit once: refused from memory until the window ends.
        inMemoryBlockOnConsumed: rate.points + 1,
        insuranceLimiter: new FallbackLimiter(opts, () => this.stats.fallbacks++),
      })
      this.limiters.set(name, limiter)
    }
    return limiter
  }

  /**
   * `RateLimit-Policy: "per-ip";q=10;w=60, "per-key";q=600;w=60` and
   * `RateLimit: "per-ip";r=9;t=60, "per-key";r=599;t=60` (r: requests left in the window, t: seconds
   * until it starts again). A counter not yet started has its whole quota and window ahead.
   */
  private headers(access: BrowserAccess, ip: Counted | null, key: Counted | null): Record<string, string> {
    return { 'ratelimit-policy': this.pair(access).policy, ratelimit: `${state('"per-ip"', access.ratePerIp, ip)}, ${state('"per-key"', access.rate, key)}` }
  }
}

/** What the fields are made of: a counter's points spent and the time left in its window. */
type Counted = Pick<RateLimiterRes, 'consumedPoints' | 'msBeforeNext'>

/** A quota is taken from Redis in slices of 1/LEASE_SHARE of it when that is more than one point. */
export const LEASE_SHARE = 100
const leaseSize = (rate: Rate) => Math.max(1, Math.floor(rate.points / LEASE_SHARE))

interface Lease {
  /** Points of the slice not spent yet. */
  available: number
  /** The end of the window the slice was counted in (epoch ms). */
  until: number
  /** The counter's points before this slice was taken (for the fields). */
  spentBefore: number
}

const policyOf = (access: BrowserAccess) =>
  `"per-ip";q=${access.ratePerIp.points};w=${access.ratePerIp.seconds}, "per-key";q=${access.rate.points};w=${access.rate.seconds}`

/** One limit's item of `RateLimit`; `name` quoted already. */
const state = (name: string, rate: Rate, res: Counted | null) =>
  `${name};r=${res ? Math.max(0, rate.points - res.consumedPoints) : rate.points};t=${res ? seconds(res.msBeforeNext) : rate.seconds}`

/**
 * The in-memory block's remaining time for the counter `id` (`limiter.getKey(k)`): a public method
 * of rate-limiter-flexible's store limiters that its types.d.ts leaves out.
 */
function blockedMs(limiter: RateLimiterRedis, id: string): number {
  return (limiter as RateLimiterRedis & { getInMemoryBlockMsBeforeExpire(rlKey: string): number }).getInMemoryBlockMsBeforeExpire(id)
}

type Settled = { refused: boolean; res: Counted }

/** rate-limiter-flexible rejects with a RateLimiterRes for "over the limit"; anything else is a failure of both Redis and the fallback. */
async function settle(p: Promise<RateLimiterRes>): Promise<Settled> {
  try {
    return { refused: false, res: await p }
  } catch (error) {
    if (error instanceof RateLimiterRes) return { refused: true, res: error }
    throw error
  }
}
