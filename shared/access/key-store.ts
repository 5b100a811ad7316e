/**
 * API key authentication (api-spec §5, contract §1, §16.1). Keys are cached per process for under
 * a second, so a revocation, an expiry or a publishable key's new origins hold on every replica
 * within 1 s without a database read per request; `last_used_at` is collected here and flushed in
 * one statement every few seconds.
 */
import { timingSafeEqual } from 'node:crypto'
import type { Db } from '../../db/client'
import { findKeyByKeyId, touchKeys, type KeyRecord } from '../../db/queries/api-keys'
import { looksSecret, parseApiKey, secretMatches, type KeyKind } from './api-key-format'
import { AppError } from '../platform/errors'
import { parseRate, type Rate } from './publishable'
import type { Scope } from './scopes'

/** What a publishable key adds to its context (contract §16.1): where it may be used from, and its limits. */
export interface BrowserAccess {
  /** Canonical origins (`https://host[:port]`), compared exactly with a request's `Origin`. */
  origins: readonly string[]
  ratePerIp: Rate
  rate: Rate
}

export interface AuthContext {
  apiKeyId: number
  keyId: string
  keyName: string | null
  scopes: Scope[]
  kind: KeyKind
  /** Present exactly when `kind` is `publishable`. */
  browser?: BrowserAccess
  createdAt: Date
  expiresAt: Date | null
  business: { id: number; name: string }
}

interface CachedKey {
  record: KeyRecord | null
  /** A publishable key's settings, parsed once per cache fill rather than per request. */
  browser?: BrowserAccess
  at: number
  pending?: Promise<KeyRecord | null>
  /** The secret's bytes once one request proved them against the stored hash (see secretOf). */
  verified?: Buffer
}

const CACHE_TTL_MS = 500
const FLUSH_INTERVAL_MS = 5000

export class KeyStore {
  private cache = new Map<string, CachedKey>()
  private lastUsed = new Map<number, Date>()
  private timer: ReturnType<typeof setInterval> | undefined

  constructor(private readonly db: Db) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush().catch(() => {}), FLUSH_INTERVAL_MS)
    this.timer.unref?.()
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.flush().catch(() => {})
  }

  async flush(): Promise<void> {
    if (this.lastUsed.size === 0) return
    const batch = this.lastUsed
    this.lastUsed = new Map()
    await touchKeys(this.db, batch)
  }

  /**
   * A key sent in the `api_key` field of a form (contract §16.3): publishable keys only. A value
   * that presents itself as a secret key is a 403 whether or not it is valid (nothing is looked
   * up): a secret must never be pasted into a page, and the answer must not tell whether it works.
   */
  async authenticateFormKey(raw: string): Promise<AuthContext> {
    if (looksSecret(raw.trim()))
      throw new AppError(
        'forbidden',
        'A secret key (AC_LIVE_…) is never taken from a form field: a page shows it to every visitor. ' +
          'Use a publishable key (AC_PUB_…) in forms, and revoke this secret key if it was published.',
      )
    return this.authenticateKey(raw.trim())
  }

  /** A key as sent (readKeyHeader, or a form's field); throws 401 for every way a key can be unusable. */
  async authenticateKey(raw: string): Promise<AuthContext> {
    const parsed = parseApiKey(raw)
    if (!parsed) throw new AppError('unauthorized', 'Malformed API key: expected AC_LIVE_<key_id>.<secret> or AC_PUB_<key_id>.<secret>')
    const entry = await this.lookup(parsed.keyId)
    const record = entry.record
    if (!record || record.kind !== parsed.kind || !secretOf(entry, parsed.secret, record.secretHash)) throw new AppError('unauthorized', 'Invalid API key')
    if (record.revokedAt) throw new AppError('unauthorized', 'API key has been revoked')
    if (record.expiresAt && record.expiresAt.getTime() <= Date.now()) throw new AppError('unauthorized', 'API key has expired')
    this.lastUsed.set(record.id, new Date())
    return {
      apiKeyId: record.id,
      keyId: record.keyId,
      keyName: record.name,
      scopes: record.scopes as Scope[],
      kind: parsed.kind,
      browser: entry.browser,
      createdAt: record.createdAt,
      expiresAt: record.expiresAt,
      business: record.business,
    }
  }

  private async lookup(keyId: string): Promise<CachedKey> {
    const now = Date.now()
    const hit = this.cache.get(keyId)
    if (hit && now - hit.at < CACHE_TTL_MS) {
      if (hit.pending) await hit.pending
      return this.cache.get(keyId) ?? hit
    }
    // One database read per key per TTL, however many requests arrive at once.
    const pending = findKeyByKeyId(this.db, keyId)
    this.cache.set(keyId, { record: hit?.record ?? null, browser: hit?.browser, at: now, pending })
    try {
      const record = await pending
      const entry: CachedKey = { record, browser: record ? browserAccessOf(record) : undefined, at: Date.now() }
      this.cache.set(keyId, entry)
      if (this.cache.size > 10_000) this.evict()
      return entry
    } catch (error) {
      this.cache.delete(keyId)
      throw error
    }
  }

  private evict(): void {
    const cutoff = Date.now() - CACHE_TTL_MS
    for (const [k, v] of this.cache) if (v.at < cutoff && !v.pending) this.cache.delete(k)
  }
}

/**
 * Whether `secret` is the key's. SHA-256 runs once per cache fill: the secret that matched is kept
 * with the entry (which lives under a second) and later requests are compared with it in constant
 * time; hashing every request was a fortieth of the ingest path's CPU. A key has one secret, so a
 * secret unlike the proven one cannot match the hash either.
 */
function secretOf(entry: CachedKey, secret: string, storedHash: string): boolean {
  const sent = Buffer.from(secret)
  if (entry.verified) return entry.verified.length === sent.length && timingSafeEqual(entry.verified, sent)
  if (!secretMatches(secret, storedHash)) return false
  entry.verified = sent
  return true
}

/** Only the CLI writes these columns, after parsing them with the same rules (shared/access/publishable.ts). */
function browserAccessOf(record: KeyRecord): BrowserAccess | undefined {
  if (record.kind !== 'publishable' || !record.origins || !record.ratePerIp || !record.rate) return undefined
  return { origins: record.origins, ratePerIp: parseRate(record.ratePerIp), rate: parseRate(record.rate) }
}

const AUTHORIZATION_RE = /^ApiKey[ \t]+(\S+)$/i

/**
 * The key from its two documented forms (api-spec §5): `X-Api-Key: <key>`, or
 * `Authorization: ApiKey <key>` (the scheme name is case-insensitive, as every HTTP scheme). A bare
 * key or another scheme in Authorization is refused, not guessed at. Null when neither is sent.
 */
export function readKeyHeader(headers: Headers): string | null {
  const direct = headers.get('x-api-key')
  if (direct !== null) return direct.trim()
  const authorization = headers.get('authorization')
  if (authorization === null) return null
  const m = AUTHORIZATION_RE.exec(authorization.trim())
  if (!m) throw new AppError('unauthorized', 'Malformed Authorization header: expected "ApiKey <key>" (or send the key in X-Api-Key)')
  return m[1]
}

export function requireScope(auth: AuthContext, scope: Scope): void {
  if (!auth.scopes.includes(scope)) throw new AppError('forbidden', `This API key lacks the ${scope} scope`)
}
