/**
 * A publishable key's two limits (contract §16.4): `rate_per_ip` per client address and `rate`
 * for the whole key, counted in Redis so they hold across every API replica. The counting is
 * rate-limiter-flexible's (a fixed window per limit, one atomic Lua call per counter); what is
 * ours is how the two are combined, kept cheap and kept fair:
 *
 * - Both counters are asked in the same turn of the event loop on a connection with ioredis's
 *   auto-pipelining, so they travel to Redis in one write and come back in one read: one round
 *   trip per request (fewer under load, where many requests share a write).
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
  constructor(opts: ConstructorParameters<typeof RateLimiterMemory>[0], private readonly used: () => void) {
    super(opts)
  }
  override consume(key: string | number, points?: number, options?: { [key: string]: any }) {
    this.used()
    return super.consume(key, points, options)
  }
  override reward(key: string | number, points?: number, options?: { [key: string]: any }) {
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
  readonly stats: LimiterStats = { checks: 0, blockedInMemory: 0, fallbacks: 0 }

  /** `redis`: a connection of the limits' own (auto-pipelining, command timeout), closed by `close()`. */
  constructor(private readonly redis: IORedis, private readonly prefix: string) {}

  static connect(shared: IORedis, prefix: string): RateLimits {
    const redis = shared.duplicate({ enableAutoPipelining: true, commandTimeout: LIMIT_TIMEOUT_MS, connectionName: 'rate-limits' })
    redis.on('error', () => {})
    return new RateLimits(redis, prefix)
  }

  close(): void {
    this.redis.disconnect()
  }

  /** Counts one request against both limits; refused when either is over. */
  async consume(keyId: string, access: BrowserAccess, address: string): Promise<LimitOutcome> {
    this.stats.checks++
    const { ip, key } = this.pair(access)
    const ipKey = `${keyId}:${address}`
    const ipBlocked = blockedMs(ip, ipKey)
    const keyBlocked = ipBlocked > 0 ? 0 : blockedMs(key, keyId)
    if (ipBlocked > 0 || keyBlocked > 0) {
      // Known from memory: no Redis call, so the fields name only the limit that refuses.
      this.stats.blockedInMemory++
      const [name, rate, ms] = ipBlocked > 0 ? (['per-ip', access.ratePerIp, ipBlocked] as const) : (['per-key', access.rate, keyBlocked] as const)
      return { exceeded: name, retryAfter: Math.max(1, seconds(ms)), headers: { 'ratelimit-policy': this.policy(access), ratelimit: `"${name}";r=0;t=${seconds(ms)}` } }
    }
    const [ipRes, keyRes] = await Promise.all([settle(ip.consume(ipKey)), settle(key.consume(keyId))])
    // A point spent on a request the other limit refused goes back (see the file comment).
    const ipState: Counted = ipRes.res
    let keyState: Counted = keyRes.res
    if (ipRes.refused && !keyRes.refused) keyState = giveBack(key, keyId, keyRes.res)
    const headers = this.headers(access, keyRes.refused && !ipRes.refused ? giveBack(ip, ipKey, ipRes.res) : ipState, keyState)
    if (ipRes.refused) return { exceeded: 'per-ip', retryAfter: Math.max(1, seconds(ipRes.res.msBeforeNext)), headers }
    if (keyRes.refused) return { exceeded: 'per-key', retryAfter: Math.max(1, seconds(keyRes.res.msBeforeNext)), headers }
    return { headers }
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

  private pair(access: BrowserAccess): Pair {
    return { ip: this.limiter('ip', access.ratePerIp), key: this.limiter('key', access.rate) }
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
    const state = (name: LimitName, rate: Rate, res: Counted | null) =>
      `"${name}";r=${res ? Math.max(0, rate.points - res.consumedPoints) : rate.points};t=${res ? seconds(res.msBeforeNext) : rate.seconds}`
    return { 'ratelimit-policy': this.policy(access), ratelimit: `${state('per-ip', access.ratePerIp, ip)}, ${state('per-key', access.rate, key)}` }
  }

  private policy(access: BrowserAccess): string {
    return `"per-ip";q=${access.ratePerIp.points};w=${access.ratePerIp.seconds}, "per-key";q=${access.rate.points};w=${access.rate.seconds}`
  }
}

/** What the fields are made of: a counter's points spent and the time left in its window. */
type Counted = Pick<RateLimiterRes, 'consumedPoints' | 'msBeforeNext'>

/** Returns a point without waiting for Redis; the answer's fields already show it returned. */
function giveBack(limiter: RateLimiterRedis, k: string, res: RateLimiterRes): Counted {
  void limiter.reward(k).catch(() => {})
  return { consumedPoints: Math.max(0, res.consumedPoints - 1), msBeforeNext: res.msBeforeNext }
}

/** The in-memory block's remaining time: a public method of rate-limiter-flexible's store limiters that its types.d.ts leaves out. */
function blockedMs(limiter: RateLimiterRedis, k: string): number {
  return (limiter as RateLimiterRedis & { getInMemoryBlockMsBeforeExpire(rlKey: string): number }).getInMemoryBlockMsBeforeExpire(limiter.getKey(k))
}

type Settled = { refused: false; res: RateLimiterRes } | { refused: true; res: RateLimiterRes }

/** rate-limiter-flexible rejects with a RateLimiterRes for "over the limit"; anything else is a failure of both Redis and the fallback. */
async function settle(p: Promise<RateLimiterRes>): Promise<Settled> {
  try {
    return { refused: false, res: await p }
  } catch (error) {
    if (error instanceof RateLimiterRes) return { refused: true, res: error }
    throw error
  }
}
