import type IORedis from 'ioredis'
import type { Database } from '../db/client'
import type { Config } from '../shared/platform/config'
import type { Logger } from '../shared/platform/logger'
import type { Queues } from '../shared/platform/queues'
import type { IngestBatcher } from './ingest-batcher'
import type { Storage } from '../shared/platform/storage'
import type { KeyStore } from '../shared/access/key-store'
import type { Metrics } from './metrics'

/** Everything a route needs, built once by api/index.ts (or by a test) and handed to createApp. */
export interface AppDeps {
  config: Config
  database: Database
  redis: IORedis
  queues: Queues
  keys: KeyStore
  logger: Logger
  metrics: Metrics
  /** Rental-ingest micro-batcher; flushed by closeApiDeps before Redis closes. */
  ingest: IngestBatcher
  /** Object storage: presigned uploads into private storage, local `/storage` and `/cdn` routes. */
  storage: Storage
}
