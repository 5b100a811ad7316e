/**
 * image-watermark (contract §5): makes an image's public copy in a worker thread (pixel limit
 * from the header first, auto-orient, ≤ 1920 px, metadata stripped, the business's watermark),
 * stores it under an unguessable key in public storage, marks the image ready and queues the
 * property's catalogue-reindex. A refused image is `failed` with a reason and its original
 * deleted. Safe to run twice: the public key is derived from the image id with APP_SECRET, so
 * a retry overwrites the same object, and a ready image is left alone.
 */
import { UnrecoverableError, type Job } from 'bullmq'
import { Value } from '@sinclair/typebox/value'
import { createHmac } from 'node:crypto'
import { loadImageToProcess, markImageFailed, markImageReady } from '../../db/queries/images'
import { ImageWatermarkPayload } from '../../shared/platform/jobs'
import { OUTPUT_CONTENT_TYPE, OUTPUT_EXTENSION } from '../../shared/media/output'
import { ImageRejectedError } from '../../shared/media/transform'
import type { WatermarkSpec } from '../../shared/media/watermark'
import type { WorkerDeps } from '../deps'

/** Unguessable (HMAC with APP_SECRET) yet stable across retries of the same image. */
export function publicKeyOf(appSecret: string, imageId: string): string {
  return `images/${createHmac('sha256', appSecret).update(`public-image:${imageId}`).digest('hex').slice(0, 32)}.${OUTPUT_EXTENSION}`
}

/** Logos are tiny and change rarely (a new one gets a new key): kept per key for the process's life. */
const logos = new Map<string, Uint8Array>()

async function watermarkOf(deps: Pick<WorkerDeps, 'storage'>, business: { businessName: string; watermarkKey: string | null }): Promise<WatermarkSpec> {
  if (!business.watermarkKey) return { kind: 'text', text: business.businessName }
  let data = logos.get(business.watermarkKey)
  if (!data) {
    const stored = await deps.storage.get('private', business.watermarkKey)
    // A logo that vanished falls back to the name rather than blocking every photo.
    if (!stored) return { kind: 'text', text: business.businessName }
    if (logos.size > 100) logos.clear()
    logos.set(business.watermarkKey, (data = stored))
  }
  return { kind: 'image', cacheKey: business.watermarkKey, data: data.slice() }
}

export async function processImageWatermark(deps: WorkerDeps, job: Pick<Job, 'data'>): Promise<unknown> {
  if (!Value.Check(ImageWatermarkPayload, job.data)) throw new UnrecoverableError('invalid image-watermark payload')
  const { db } = deps.database
  const image = await loadImageToProcess(db, job.data.imageId)
  if (!image || image.state !== 'processing') return { skipped: image?.state ?? 'missing' }

  const original = await deps.storage.get('private', image.originalKey)
  if (!original) {
    await markImageFailed(db, image, 'The file was not uploaded')
    return { failed: true }
  }
  const watermark = await watermarkOf(deps, image)
  let result
  try {
    result = await deps.imagePool.run(original, { maxPixels: deps.config.imageMaxPixels, watermark })
  } catch (error) {
    if (!(error instanceof ImageRejectedError)) throw error // thread crash, out of memory: retried
    await markImageFailed(db, image, error.message)
    await deps.storage.delete('private', image.originalKey).catch(() => {})
    // The primary role may have moved to another, already public image.
    await deps.queues.enqueue('catalogue-reindex', { propertyId: image.propertyId })
    return { failed: true }
  }
  const publicKey = publicKeyOf(deps.config.appSecret, image.id)
  await deps.storage.put('public', publicKey, result.data, OUTPUT_CONTENT_TYPE)
  await markImageReady(db, image, { publicKey, publicUrl: deps.storage.publicUrl(publicKey), width: result.width, height: result.height })
  await deps.queues.enqueue('catalogue-reindex', { propertyId: image.propertyId })
  return { width: result.width, height: result.height }
}
