/**
 * Builds the API's dependencies from config, checking PostgreSQL and Redis answer first so a
 * missing service is one clear line (contract §7), and tears them down in order.
 */
import { createDatabase } from '../db/client'
import { storeIngestBatch } from '../shared/leads/operations'
import type { Config } from '../shared/platform/config'
import { createLogger, type Logger } from '../shared/platform/logger'
import { Queues, redisConnection } from '../shared/platform/queues'
import { ConcurrencyLimit } from '../shared/platform/concurrency-limit'
import { ReadRouter } from '../shared/platform/read-replica'
import { ReplicaAck } from '../shared/platform/replica-ack'
import { describeConnectionError } from '../shared/platform/service-errors'
import { createStorage } from '../shared/platform/storage'
import { isConnectionError } from '../shared/platform/unavailable'
import type { AppDeps } from './deps'
import { IngestBatcher } from './ingest-batcher'
import { KeyStore } from '../shared/access/key-store'
import { CataloguePageCache } from '../shared/listings/catalogue-cache'
import { Metrics } from './metrics'
import { RateLimits } from './rate-limits'

export class StartupError extends Error {
  override name = 'StartupError'
}

export async function createApiDeps(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<AppDeps> {
  const database = createDatabase(config.databaseUrl, { max: config.dbPoolSize, directUrl: config.databaseDirectUrl })
  try {
    await database.sql`select 1`
  } catch (error) {
    await database.close(1).catch(() => {})
    throw new StartupError(describeConnectionError('PostgreSQL', config.databaseUrl, error))
  }
  const redis = redisConnection(config, 'producer')
  redis.on('error', () => {}) // reported by /readyz and per request; avoids an unhandled 'error' event
  try {
    await waitForRedis(redis)
  } catch (error) {
    redis.disconnect()
    await database.close(1).catch(() => {})
    throw new StartupError(describeConnectionError('Redis', config.redisUrl, error, config.redisSentinel))
  }
  const storage = await createStorage(config)
  await storage.ensureReady()
  const keys = new KeyStore(database.db)
  keys.start()
  const queues = new Queues(redis, config.queuePrefix)
  const ingestPath = ingestQueues(config, redis, queues)
  // Ready before the first batch, which would otherwise find it still connecting and fall back.
  if (ingestPath.queues !== queues) await waitForRedis(ingestPath.queues.connection).catch(() => {})
  const ingest = new IngestBatcher({
    ...config.ingestBatch,
    enqueue: async (leads) => {
      await ingestPath.queues.enqueue('lead-ingest', { leads })
      // Answered only once a replica holds the job too, so a 200 survives the master's loss; a
      // replica that does not acknowledge in time sends the batch to PostgreSQL (docs/leads.md).
      await ingestPath.ack?.acknowledged()
    },
    store: (leads) => storeIngestBatch({ database }, leads),
    logger,
  })
  // A replica that is down at start-up is only bypassed: reads go to the primary until it answers.
  const reads = config.databaseReadUrl
    ? new ReadRouter({
        primary: database,
        replica: createDatabase(config.databaseReadUrl, { max: config.dbPoolSize }),
        redis,
        keyPrefix: config.queuePrefix,
        maxLagMs: config.databaseReadMaxLagMs,
        logger,
      })
    : undefined
  reads?.start()
  const catalogueCache = config.catalogueCacheBytes > 0 ? new CataloguePageCache(config.catalogueCacheBytes) : undefined
  const catalogueReads = config.catalogueConcurrency > 0 ? new ConcurrencyLimit(config.catalogueConcurrency, { liftOn: isConnectionError }) : undefined
  const rateLimits = RateLimits.connect(redis, config.queuePrefix)
  // Counted in Redis from the first request (a process counts alone until its connection is up).
  await rateLimits.ready().catch(() => {})
  return {
    config,
    database,
    redis,
    queues,
    ingestQueues: ingestPath.queues,
    keys,
    logger,
    metrics: new Metrics(),
    ingest,
    storage,
    reads,
    catalogueCache,
    catalogueReads,
    rateLimits,
    peerAddress: () => undefined,
  }
}

/**
 * With replica acknowledgement the ingest has a connection of its own: WAIT blocks the connection
 * it runs on, and must run on the one that wrote; every other Redis call of the API stays on the
 * shared connection, never behind a WAIT. Without it the ingest uses the shared queues.
 */
function ingestQueues(config: Config, redis: AppDeps['redis'], queues: Queues): { queues: Queues; ack?: ReplicaAck } {
  if (config.redisWait.replicas === 0) return { queues }
  const connection = redis.duplicate()
  connection.on('error', () => {})
  return { queues: new Queues(connection, config.queuePrefix), ack: new ReplicaAck(connection, config.redisWait.replicas, config.redisWait.timeoutMs) }
}

async function waitForRedis(redis: AppDeps['redis']): Promise<void> {
  const deadline = Date.now() + 3000
  for (;;) {
    try {
      await redis.ping()
      return
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

export async function closeApiDeps(deps: AppDeps): Promise<void> {
  await deps.keys.stop()
  // Leads still gathering go to Redis (or PostgreSQL) before the connection closes.
  await deps.ingest.close()
  await deps.queues.close().catch(() => {})
  if (deps.ingestQueues !== deps.queues) {
    await deps.ingestQueues.close().catch(() => {})
    deps.ingestQueues.connection.disconnect()
  }
  deps.rateLimits.close()
  deps.redis.disconnect()
  deps.reads?.stop()
  await Promise.all([deps.database.close(5), deps.reads?.replica.close(5)])
}
