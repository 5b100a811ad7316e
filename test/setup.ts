/**
 * Test preload (bunfig.toml): points the suite at its own database and makes sure PostgreSQL
 * and Redis answer and the schema is migrated, with one clear line when they do not.
 */
export {}

process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/property_lead_test'
process.env.LOG_LEVEL ??= 'silent'

const { migrateDatabase } = await import('../db/migrate')
const { getConfig } = await import('../shared/platform/config')
const { describeConnectionError } = await import('../shared/platform/service-errors')
const IORedis = (await import('ioredis')).default

const config = getConfig()
try {
  await migrateDatabase(config.databaseUrl)
} catch (error) {
  console.error(describeConnectionError('PostgreSQL', config.databaseUrl, error) + ` (${(error as Error).message})`)
  process.exit(1)
}
const redis = new IORedis(config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null })
try {
  await redis.connect()
  await redis.ping()
} catch (error) {
  console.error(describeConnectionError('Redis', config.redisUrl, error))
  process.exit(1)
} finally {
  redis.disconnect()
}
