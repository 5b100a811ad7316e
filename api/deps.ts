import type IORedis from 'ioredis'
import type { Queues } from '../shared/platform/queues'
import type { Services } from '../shared/platform/services'
import type { KeyStore } from '../shared/access/key-store'
import type { IngestBatcher } from './ingest-batcher'
import type { Metrics } from './metrics'
import type { RateLimits } from './rate-limits'
import type { CataloguePageCache } from '../shared/listings/catalogue-cache'
import type { ConcurrencyLimit } from '../shared/platform/concurrency-limit'

/** Everything a route needs, built once by api/index.ts (or by a test) and handed to createApp. */
export interface AppDeps extends Services {
  redis: IORedis
  keys: KeyStore
  metrics: Metrics
  /** The queues the rental ingest enqueues to: `queues`, or its own connection when it waits for replicas (api/runtime.ts). */
  ingestQueues: Queues
  /** Rental-ingest micro-batcher; flushed by closeApiDeps before Redis closes. */
  ingest: IngestBatcher
  /** In-process cache of catalogue list pages (CATALOGUE_CACHE_MB; absent when 0). */
  catalogueCache?: CataloguePageCache
  /** The bound on catalogue list statements at once (CATALOGUE_CONCURRENCY; absent when 0). */
  catalogueReads?: ConcurrencyLimit
  /** Publishable keys' limits in Redis (contract §16.4). */
  rateLimits: RateLimits
  /**
   * The connection's peer address of a request, once a listener serves the app (api/server.ts sets
   * it); undefined for a request handed to `app.handle` directly.
   */
  peerAddress: (request: Request) => string | undefined
}
