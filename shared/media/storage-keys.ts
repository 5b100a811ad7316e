/**
 * Storage keys of media objects. None is derived from an id that appears in an answer, so no
 * key can be guessed from the API; the public copy's key is still stable per image, so a
 * retried job overwrites its own object instead of leaving another behind.
 */
import { createHmac, randomBytes } from 'node:crypto'
import { OUTPUT_EXTENSION } from './output'

/** Where an uploaded original lands in private storage. */
export const newOriginalKey = () => `originals/${randomBytes(16).toString('hex')}`

/** A new key per logo: workers cache logos by key, so a changed logo is never served stale. */
export const newWatermarkKey = () => `watermarks/${randomBytes(16).toString('hex')}.png`

/** Unguessable (HMAC with APP_SECRET) yet stable across retries of the same image. */
export function publicKeyOf(appSecret: string, imageId: string): string {
  return `images/${createHmac('sha256', appSecret).update(`public-image:${imageId}`).digest('hex').slice(0, 32)}.${OUTPUT_EXTENSION}`
}

/**
 * Where one transcode attempt writes a video's rendition in public storage: random per attempt,
 * so an attempt cut short can never mix its files with the next one's.
 */
export const newVideoPrefix = () => `videos/${randomBytes(16).toString('hex')}/`
