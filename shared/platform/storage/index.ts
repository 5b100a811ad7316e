/**
 * Object storage behind one small interface (contract §5): `private` holds the originals that
 * integrators upload (never served, never named in a response or log line); `public` holds the
 * watermarked copies served under CDN_URL. Two drivers: `local` (files under DATA_DIR, the
 * single-machine default) and `s3` (AWS S3, MinIO, R2, …).
 */
import type { Config } from '../config'
import type { Storage } from './interface'

export type { Area, ObjectInfo, PresignedPut, PresignPutOptions, Storage } from './interface'
export { assertKey, assertPrefix } from './interface'

export async function createStorage(config: Config): Promise<Storage> {
  if (config.storageDriver === 's3') {
    const { S3Storage } = await import('./s3')
    return new S3Storage(config)
  }
  const { LocalStorage } = await import('./local')
  return new LocalStorage(config)
}
