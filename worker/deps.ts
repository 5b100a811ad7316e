import type { Database } from '../db/client'
import type { Config } from '../shared/config'
import type { Logger } from '../shared/logger'
import type { Queues } from '../shared/queues'
import type { ImagePool } from '../shared/images/pool'
import type { Storage } from '../shared/storage'

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
