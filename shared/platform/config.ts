/**
 * The one place that reads the environment (conventions §5). Parsed and validated once;
 * every default works on a single developer machine (contract §7).
 */
import { availableParallelism } from 'node:os'
import { parseConnectionUrl } from '../../db/connection-url'
import { QUEUE_NAMES, type QueueName } from './queue-names'

export type StorageDriver = 'local' | 's3'

export interface Config {
  port: number
  /**
   * Share PORT with other processes through SO_REUSEPORT. Off by default: a stale instance still
   * bound to the port would otherwise take part of the traffic unseen.
   */
  reusePort: boolean
  /**
   * What `bun run start` (the supervisor, main.ts) runs on this machine: API processes sharing PORT
   * (one per core: one event loop each) and worker processes, each with WORKER_QUEUES.
   */
  apiProcesses: number
  workerProcesses: number
  /**
   * A second listener of this API process answering only /metrics, /healthz and /readyz, so each
   * process can be scraped on its own while several share PORT (the supervisor gives API process i
   * METRICS_PORT + i). Unset: none.
   */
  metricsPort: number | undefined
  /** Niceness of the supervisor's worker processes: above 0 lets the API processes have the cores first under load. */
  workerNice: number
  /** One host, or several with `target_session_attrs=read-write` (the primary of the list; docs/operations.md "Failover"). */
  databaseUrl: string
  /** A streaming replica for catalogue and list reads (read-your-writes by commit LSN, docs/operations.md "Read replica"). */
  databaseReadUrl: string | undefined
  /** A replica whose replay is further behind than this is bypassed (reads go to the primary). */
  databaseReadMaxLagMs: number
  /**
   * PostgreSQL itself, never a transaction-mode pooler: migrations (a session advisory lock) and
   * LISTEN need a session that outlives a transaction. DATABASE_URL when unset.
   */
  databaseDirectUrl: string
  redisUrl: string
  /**
   * Redis through Sentinel: the master's address comes from these sentinels, and REDIS_URL gives
   * only the credentials and database (docs/operations.md "Redis Sentinel").
   */
  redisSentinel: RedisSentinel | undefined
  /**
   * Replicas that must acknowledge a rental-ingest batch (Redis WAIT) before its requests are
   * answered; 0 answers on the master's acknowledgement alone (docs/leads.md).
   */
  redisWait: { replicas: number; timeoutMs: number }
  /** BullMQ key prefix: lets tests and staging share one Redis without seeing each other. */
  queuePrefix: string
  workerQueues: QueueName[]
  /** Base URL the service is reached at; used in local signed upload URLs and `/cdn/*`. */
  publicUrl: string
  cdnUrl: string
  storageDriver: StorageDriver
  dataDir: string
  s3: {
    endpoint: string | undefined
    /**
     * The endpoint clients reach the store at, signed into presigned upload URLs; differs from
     * `endpoint` when the service reaches the store by an internal name (compose: `minio:9000`).
     */
    publicEndpoint: string | undefined
    region: string
    accessKeyId: string | undefined
    secretAccessKey: string | undefined
    privateBucket: string
    publicBucket: string
    forcePathStyle: boolean
  }
  /**
   * Reverse proxies in front of the API (contract §16.4): with N, a client's address is the N-th
   * address from the right of `X-Forwarded-For`; 0 takes the connection's peer and ignores the header.
   */
  trustProxyHops: number
  /** Signs local upload URLs and encrypts outreach secrets at rest. */
  appSecret: string
  /** A published value, possible only with NODE_ENV development or test (start-up warns). */
  appSecretIsDefault: boolean
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent'
  shutdownTimeoutMs: number
  /**
   * PostgreSQL connections of an API process (DB_POOL_SIZE, default 20). postgres.js fails a
   * queued statement only as a connection retries, so during an outage a small pool answers its
   * 503s in seconds (docs/operations.md "Connections"); the catalogue's own bound is below.
   */
  dbPoolSize: number
  /**
   * Catalogue list statements an API process runs at once (CATALOGUE_CONCURRENCY, default 4; 0 =
   * as many as requests): the others wait their turn in the process, which keeps the tail short
   * where the API shares a few cores with PostgreSQL (shared/platform/concurrency-limit.ts). A
   * page served from the page cache only checks its generation, without waiting.
   */
  catalogueConcurrency: number
  /** Bytes of catalogue list pages each API process keeps (CATALOGUE_CACHE_MB; 0 = no cache). */
  catalogueCacheBytes: number
  /** Rental-ingest micro-batching in the API (api/ingest-batcher.ts, docs/leads.md). */
  ingestBatch: { maxItems: number; maxWaitMs: number; enqueueTimeoutMs: number }
  /** Outreach webhook request timeout; a slower endpoint counts as a failed attempt. */
  outreachTimeoutMs: number
  /** Outreach retry backoff: base·2^(n-1) capped at max (docs/outreach.md has the schedule). */
  outreachBackoffBaseMs: number
  outreachBackoffMaxMs: number
  /** Largest image accepted, in pixels (width × height from the header, before any decode). */
  imageMaxPixels: number
  /** Worker threads that run the sharp transform (image-watermark). */
  imageThreads: number
  /** Lifetime of presigned upload URLs (contract §5: at most 15 minutes). */
  uploadUrlTtlSeconds: number
  /** Hosts an image import may fetch without the public-address check, as written in the URL (contract §9.2, §15). */
  imageImportAllowHosts: string[]
  /** Bound of one import fetch, every hop and the body (contract §9.2: 30 s; operators may lower it). */
  imageImportTimeoutMs: number
  /** Transcodes one worker process runs at once (contract §9.3). */
  videoConcurrency: number
  /** Webhook deliveries (contract §10.2, docs/events.md). */
  webhooks: {
    /** A 2xx within this is a success; slower is a failed attempt. */
    timeoutMs: number
    /** First retry delay, doubling, capped at 6 h. */
    backoffBaseMs: number
    /** An endpoint failing continuously this long is disabled; a delivery is retried this long. */
    disableAfterMs: number
    /** Hosts reached without the public-address check, as written in the URL (contract §15). */
    allowHosts: string[]
    /** Requests in flight to one endpoint at once (fairness: what one endpoint can hold). */
    endpointConcurrency: number
  }
}

export interface RedisSentinel {
  /** The master's name as the sentinels know it (`sentinel monitor <name> …`). */
  master: string
  sentinels: { host: string; port: number }[]
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/**
 * compose's PostgreSQL (published on 5432) requires its password; a local server with `trust`
 * authentication ignores it, so one default reaches both.
 */
export const DEFAULT_DATABASE_URL = 'postgres://postgres:postgres@127.0.0.1:5432/property_lead'

const DEV_SECRET = 'dev-only-secret-change-me-in-production-0000000000'
/** Secrets that were ever published (the development value, compose's former default): never usable outside development and test. */
const PUBLISHED_SECRETS = new Set([DEV_SECRET, 'change-me-to-a-long-random-secret-of-32-chars-or-more'])

/**
 * Contract §15 (§7): APP_SECRET signs upload URLs and encrypts outreach secrets at rest, so outside
 * development and test a missing, short or published value stops start-up; a fallback there would
 * encrypt real webhook secrets under a key anyone can read. `bun test` sets NODE_ENV=test; the
 * developer scripts in package.json default it to development.
 */
function appSecretOf(env: Record<string, string | undefined>): string {
  const relaxed = env.NODE_ENV === 'development' || env.NODE_ENV === 'test'
  const raw = env.APP_SECRET
  if (raw === undefined || raw === '') {
    if (relaxed) return DEV_SECRET
    const nodeEnv = env.NODE_ENV ? `NODE_ENV is "${env.NODE_ENV}"` : 'NODE_ENV is not set'
    throw new ConfigError(
      `APP_SECRET is required unless NODE_ENV is development or test (${nodeEnv}): set it to a random string of at least 32 characters, e.g. ` +
        `\`openssl rand -base64 48\``,
    )
  }
  if (raw.length < 32) throw new ConfigError(`APP_SECRET must be at least 32 characters, got ${raw.length}`)
  if (!relaxed && PUBLISHED_SECRETS.has(raw))
    throw new ConfigError('APP_SECRET is a published example value: set it to your own random string of at least 32 characters')
  return raw
}

function int(env: Record<string, string | undefined>, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`)
  return n
}

function bool(env: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (/^(1|true|yes)$/i.test(raw)) return true
  if (/^(0|false|no)$/i.test(raw)) return false
  throw new ConfigError(`${name} must be true or false, got "${raw}"`)
}

/** A comma-separated list of host names as written in URLs (`host`, `host:port` is refused: hosts only). */
function hostList(env: Record<string, string | undefined>, name: string): string[] {
  const raw = env[name]?.trim()
  if (!raw) return []
  const hosts = raw
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean)
  for (const host of hosts) {
    if (!URL.canParse(`http://${host}`) || new URL(`http://${host}`).port !== '' || /[/?#@]/.test(host))
      throw new ConfigError(`${name} must list host names separated by commas, got "${host}"`)
  }
  return hosts
}

/** REDIS_SENTINELS (`host:port,…`) and REDIS_SENTINEL_MASTER: both or neither. */
function redisSentinelOf(env: Record<string, string | undefined>): RedisSentinel | undefined {
  const raw = env.REDIS_SENTINELS?.trim()
  const master = env.REDIS_SENTINEL_MASTER?.trim()
  if (!raw && !master) return undefined
  if (!raw) throw new ConfigError('REDIS_SENTINEL_MASTER is set but REDIS_SENTINELS is not: list the sentinels as host:port,host:port')
  if (!master) throw new ConfigError('REDIS_SENTINELS is set but REDIS_SENTINEL_MASTER is not: name the master the sentinels monitor')
  const sentinels = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const parsed = URL.canParse(`redis://${entry}`) ? new URL(`redis://${entry}`) : undefined
      if (!parsed?.port || parsed.pathname !== '' || parsed.username || /[/?#@]/.test(entry)) {
        throw new ConfigError(`REDIS_SENTINELS must list host:port entries separated by commas, got "${entry}"`)
      }
      return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port: Number(parsed.port) }
    })
  return { master, sentinels }
}

function url(env: Record<string, string | undefined>, name: string, fallback: string, protocols: string[]): string {
  const raw = env[name] || fallback
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`)
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${raw}"`)
  return raw.replace(/\/+$/, '')
}

/**
 * A PostgreSQL URL, several hosts allowed. With several, only `target_session_attrs=read-write`
 * (or `primary`) makes the driver skip standbys; without it a write could land on one.
 */
function postgresUrl(env: Record<string, string | undefined>, name: string, fallback: string): string {
  const raw = env[name] || fallback
  let hosts: number
  let attrs: string | null
  try {
    const parsed = parseConnectionUrl(raw)
    hosts = parsed.hosts.length
    attrs = parsed.params.get('target_session_attrs')
  } catch (error) {
    throw new ConfigError(`${name} must be a postgres:// URL (several hosts as host1:port1,host2:port2), got "${raw}": ${(error as Error).message}`)
  }
  if (attrs !== null && !['read-write', 'primary'].includes(attrs))
    throw new ConfigError(`${name}: target_session_attrs must be read-write or primary, got "${attrs}"`)
  if (hosts > 1 && attrs === null) throw new ConfigError(`${name} lists ${hosts} hosts: add ?target_session_attrs=read-write so writes go only to the primary`)
  return raw
}

/** The optional read replica: one host, no target_session_attrs (it is a standby by design). */
function replicaUrl(env: Record<string, string | undefined>, name: string): string | undefined {
  const raw = env[name]
  if (!raw) return undefined
  let parsed: ReturnType<typeof parseConnectionUrl>
  try {
    parsed = parseConnectionUrl(raw)
  } catch (error) {
    throw new ConfigError(`${name} must be a postgres:// URL, got "${raw}": ${(error as Error).message}`)
  }
  if (parsed.params.has('target_session_attrs')) throw new ConfigError(`${name} names a replica: drop target_session_attrs (read-write would refuse it)`)
  return raw
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const port = int(env, 'PORT', 3000, 0, 65535)
  const publicUrl = url(env, 'PUBLIC_URL', `http://127.0.0.1:${port}`, ['http:', 'https:'])
  const storageDriver = (env.STORAGE_DRIVER || 'local') as StorageDriver
  if (storageDriver !== 'local' && storageDriver !== 's3') throw new ConfigError(`STORAGE_DRIVER must be local or s3, got "${storageDriver}"`)

  const workerQueuesRaw = env.WORKER_QUEUES?.trim()
  const workerQueues =
    !workerQueuesRaw || workerQueuesRaw === 'all'
      ? [...QUEUE_NAMES]
      : workerQueuesRaw
          .split(',')
          .map((q) => q.trim())
          .filter(Boolean)
  for (const q of workerQueues) {
    if (!(QUEUE_NAMES as readonly string[]).includes(q)) throw new ConfigError(`WORKER_QUEUES names an unknown queue "${q}"; known: ${QUEUE_NAMES.join(', ')}`)
  }

  const logLevel = (env.LOG_LEVEL || 'info') as Config['logLevel']
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(logLevel))
    throw new ConfigError(`LOG_LEVEL must be debug, info, warn, error or silent, got "${logLevel}"`)

  const appSecret = appSecretOf(env)
  const redisSentinel = redisSentinelOf(env)

  const s3Enabled = storageDriver === 's3'
  const s3 = {
    endpoint: env.S3_ENDPOINT || undefined,
    publicEndpoint: env.S3_PUBLIC_ENDPOINT || undefined,
    region: env.S3_REGION || 'us-east-1',
    accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
    privateBucket: env.S3_PRIVATE_BUCKET || 'property-originals',
    publicBucket: env.S3_PUBLIC_BUCKET || 'property-public',
    forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', false),
  }
  if (s3Enabled && s3.endpoint) url(env, 'S3_ENDPOINT', s3.endpoint, ['http:', 'https:'])
  if (s3Enabled && s3.publicEndpoint) s3.publicEndpoint = url(env, 'S3_PUBLIC_ENDPOINT', s3.publicEndpoint, ['http:', 'https:'])

  const databaseUrl = postgresUrl(env, 'DATABASE_URL', DEFAULT_DATABASE_URL)
  const apiProcesses = int(env, 'API_PROCESSES', availableParallelism(), 0, 256)
  const workerProcesses = int(env, 'WORKER_PROCESSES', 1, 0, 64)
  if (apiProcesses + workerProcesses === 0) throw new ConfigError('API_PROCESSES and WORKER_PROCESSES are both 0: nothing to run')
  const metricsPort = env.METRICS_PORT ? int(env, 'METRICS_PORT', 0, 1, 65535 - Math.max(0, apiProcesses - 1)) : undefined
  if (metricsPort !== undefined && port !== 0 && metricsPort <= port && port < metricsPort + Math.max(1, apiProcesses)) {
    throw new ConfigError(
      `METRICS_PORT ${metricsPort} to ${metricsPort + Math.max(1, apiProcesses) - 1} (one per API process) would include PORT ${port}: choose ` +
        `another METRICS_PORT`,
    )
  }
  return {
    port,
    reusePort: bool(env, 'REUSE_PORT', false),
    apiProcesses,
    workerProcesses,
    metricsPort,
    workerNice: int(env, 'WORKER_NICE', 0, 0, 19),
    databaseUrl,
    databaseDirectUrl: env.DATABASE_DIRECT_URL ? postgresUrl(env, 'DATABASE_DIRECT_URL', databaseUrl) : databaseUrl,
    databaseReadUrl: replicaUrl(env, 'DATABASE_READ_URL'),
    databaseReadMaxLagMs: int(env, 'DATABASE_READ_MAX_LAG_MS', 5000, 100, 600_000),
    redisUrl: url(env, 'REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']),
    redisSentinel,
    redisWait: {
      // Sentinel means replicas exist and a failover may promote one: an answered ingest must be
      // on a replica too. A single Redis has none to wait for, so it pays nothing by default.
      replicas: int(env, 'REDIS_WAIT_REPLICAS', redisSentinel ? 1 : 0, 0, 16),
      // Never 0: WAIT 0 blocks until the replicas answer, however long that is.
      timeoutMs: int(env, 'REDIS_WAIT_TIMEOUT_MS', 500, 1, 30_000),
    },
    queuePrefix: env.QUEUE_PREFIX || 'plm',
    workerQueues: workerQueues as QueueName[],
    publicUrl,
    cdnUrl: url(env, 'CDN_URL', `${publicUrl}/cdn`, ['http:', 'https:']),
    storageDriver,
    dataDir: env.DATA_DIR || './.data/storage',
    s3,
    trustProxyHops: int(env, 'TRUST_PROXY_HOPS', 0, 0, 16),
    appSecret,
    appSecretIsDefault: PUBLISHED_SECRETS.has(appSecret),
    logLevel,
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 25_000, 1000, 600_000),
    dbPoolSize: int(env, 'DB_POOL_SIZE', 20, 1, 500),
    catalogueConcurrency: int(env, 'CATALOGUE_CONCURRENCY', 4, 0, 10_000),
    catalogueCacheBytes: int(env, 'CATALOGUE_CACHE_MB', 128, 0, 65_536) * 1024 * 1024,
    ingestBatch: {
      maxItems: int(env, 'INGEST_BATCH_MAX', 100, 1, 1000),
      maxWaitMs: int(env, 'INGEST_BATCH_WAIT_MS', 2, 0, 1000),
      enqueueTimeoutMs: int(env, 'INGEST_ENQUEUE_TIMEOUT_MS', 1500, 50, 30_000),
    },
    outreachTimeoutMs: int(env, 'OUTREACH_TIMEOUT_MS', 10_000, 100, 120_000),
    outreachBackoffBaseMs: int(env, 'OUTREACH_BACKOFF_BASE_MS', 30_000, 1, 24 * 3600_000),
    outreachBackoffMaxMs: int(env, 'OUTREACH_BACKOFF_MAX_MS', 6 * 3600_000, 1, 7 * 24 * 3600_000),
    // 50 MP takes every phone and camera photo up to 8660×5773 (48/50 MP sensors) while a
    // decode stays near 150 MB; bombs are refused from the header, before any decode.
    imageMaxPixels: int(env, 'IMAGE_MAX_PIXELS', 50_000_000, 1_000_000, 268_402_689),
    // One core is left to the event loop (API, other queues); each thread holds one decode.
    imageThreads: int(env, 'IMAGE_THREADS', Math.min(4, Math.max(1, availableParallelism() - 1)), 1, 64),
    uploadUrlTtlSeconds: int(env, 'UPLOAD_URL_TTL_SECONDS', 900, 60, 900),
    imageImportAllowHosts: hostList(env, 'IMAGE_IMPORT_ALLOW_HOSTS'),
    imageImportTimeoutMs: int(env, 'IMAGE_IMPORT_TIMEOUT_MS', 30_000, 100, 30_000),
    // ffmpeg already uses every core for one transcode: more at once only adds memory.
    videoConcurrency: int(env, 'VIDEO_CONCURRENCY', 1, 1, 16),
    webhooks: {
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 50, 60_000),
      backoffBaseMs: int(env, 'WEBHOOK_BACKOFF_BASE_MS', 30_000, 1, 24 * 3600_000),
      disableAfterMs: int(env, 'WEBHOOK_DISABLE_AFTER_MS', 3 * 24 * 3600_000, 100, 30 * 24 * 3600_000),
      allowHosts: hostList(env, 'WEBHOOK_ALLOW_HOSTS'),
      endpointConcurrency: int(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 16, 1, 256),
    },
  }
}

/**
 * The environment a child process of ours starts with (`bun run start:stack` runs the API and the
 * workers): this process's, with `overrides`. Here because this is the one module that reads it.
 */
export function environmentWith(overrides: Record<string, string>): Record<string, string> {
  return { ...(process.env as Record<string, string>), ...overrides }
}

let cached: Config | undefined
/** The process-wide configuration, parsed on first use. */
export function getConfig(): Config {
  cached ??= loadConfig()
  return cached
}
