import type { Services } from '../shared/platform/services'
import type { ImagePool } from '../shared/media/pool'

/** What processors get: plain dependencies, never an HTTP context (conventions §2). */
export interface WorkerDeps extends Services {
  /** Worker threads for the sharp transform (started on first use). */
  imagePool: ImagePool
}
