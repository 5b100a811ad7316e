import type { Database } from '../db/client'
import type { Config } from '../shared/platform/config'
import type { Logger } from '../shared/platform/logger'
import type { Queues } from '../shared/platform/queues'
import type { ImagePool } from '../shared/media/pool'
import type { Storage } from '../shared/platform/storage'

/** What processors get: plain dependencies, never an HTTP context (conventions §2). */
export interface WorkerDeps {
  config: Config
  database: Database
  /** Producer side, for processors that chain jobs (upload-complete → image-watermark → catalogue-reindex). */
  queues: Queues
  logger: Logger
  storage: Storage
  /** Worker threads for the sharp transform (started on first use). */
  imagePool: ImagePool
}
