/**
 * The stores and settings every capability's operations work with, built once by each entry
 * point (api/runtime.ts, worker/runtime.ts, the CLI). Operations take the part they use,
 * `Pick<Services, 'database' | 'queues'>`, never an HTTP context or a BullMQ job (conventions §2).
 */
import type { Database } from '../../db/client'
import type { Config } from './config'
import type { Logger } from './logger'
import type { Queues } from './queues'
import type { ReadRouter } from './read-replica'
import type { Storage } from './storage'

export interface Services {
  config: Config
  database: Database
  /** Producer side of the queues. */
  queues: Queues
  storage: Storage
  logger: Logger
  /** Catalogue and list reads on a replica (DATABASE_READ_URL); absent: every read on `database`. */
  reads?: ReadRouter
}
