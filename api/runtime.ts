/**
 * Builds the API's dependencies from config, checking PostgreSQL and Redis answer first so a
 * missing service is one clear line (contract §7), and tears them down in order.
 */
import { createDatabase } from '../db/client'
import { storeIngestBatch } from '../shared/leads/operations'
import type { Config } from '../shared/platform/config'
import { createLogger, type Logger } from '../shared/platform/logger'
import { Queues, redisConnection } from '../shared/platform/queues'
import { describeConnectionError } from '../shared/platform/service-errors'
import { createStorage } from '../shared/platform/storage'
import type { AppDeps } from './deps'
import { IngestBatcher } from './ingest-batcher'
import { KeyStore } from '../shared/access/key-store'
import { Metrics } from './metrics'

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
  const redis = redisConnection(config.redisUrl, 'producer')
  redis.on('error', () => {}) // reported by /readyz and per request; avoids an unhandled 'error' event
  try {
    await waitForRedis(redis)
  } catch (error) {
    redis.disconnect()
    await database.close(1).catch(() => {})
    throw new StartupError(describeConnectionError('Redis', config.redisUrl, error))
  }
  const storage = await createStorage(config)
  await storage.ensureReady()
  const keys = new KeyStore(database.db)
  keys.start()
  const queues = new Queues(redis, config.queuePrefix)
  const ingest = new IngestBatcher({
    ...config.ingestBatch,
    enqueue: (leads) => queues.enqueue('lead-ingest', { leads }),
    store: (leads) => storeIngestBatch({ database }, leads),
    logger,
  })
  return { config, database, redis, queues, keys, logger, metrics: new Metrics(), ingest, storage }
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
  deps.redis.disconnect()
  await deps.database.close(5)
}
