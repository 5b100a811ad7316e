/**
 * Media operations (contract §5): an image upload from its presigned PUT URLs to the public
 * copy in the property's `images[]`, the sweep of abandoned uploads, and a business's watermark.
 * Routes, processors and the CLI call these with the stores they use (shared/platform/services.ts).
 * No answer names an original's storage key beyond the write-only upload URL itself.
 */
import type { Job } from 'bullmq'
import type { Database, Db } from '../../db/client'
import { findBusiness } from '../../db/queries/businesses'
import {
  abandonImage,
  abandonUploadFiles,
  createImagesForFiles,
  createUploadSession,
  deleteOldExpiredSessions,
  exhaustUploadFiles,
  expireSessions,
  failFile,
  findUploadSession,
  imageHoldsPublicKey,
  loadImageToProcess,
  loadUploadSession,
  markImageFailed,
  markImageReady,
  markPurged,
  originalsToPurge,
  reopenImage,
  reopenUploadFiles,
  revertProcessing,
  setWatermarkKey,
  settleSession,
  startProcessing,
  stuckMediaWork,
  type ImageToProcess,
  type UploadFileRow,
  type UploadSessionRow,
} from '../../db/queries/images'
import { findProperty } from '../../db/queries/properties'
import { recordEvent } from '../events/record'
import { syncCatalogueEntry } from '../listings/catalogue-rebuild'
import { notFound } from '../platform/errors'
import { JOBS, type JobDataHooksTable, type JobKind } from '../platform/jobs'
import type { Services } from '../platform/services'
import { watermarkOf } from './business-watermark'
import { prepareLogo } from './logo'
import { OUTPUT_CONTENT_TYPE } from './output'
import type { ImagePool } from './pool'
import type { CompletedImageUpload, CreateImageUpload, CreatedImageUpload, ImageUploadStatus } from './schemas'
import { newOriginalKey, newWatermarkKey, publicKeyOf } from './storage-keys'
import { ImageRejectedError, type TransformResult } from './transform'
import { fetchImportedFile, type ImportDeps } from './imports'
import { STORAGE_CLEANUP_HOOKS, queueDeletions, scheduleDeletions, type ScheduledDeletion } from './storage-cleanup'
import { VIDEO_JOB_HOOKS } from './videos'
import { checkUploadedFile, type UploadVerdict } from './upload-check'
import { effectiveState, expiredBefore } from './upload-expiry'

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const UploadNotFound = () => notFound('Upload')

/** An upload as the API names it: always within one business and one property (tenancy). */
export interface UploadRef {
  businessId: number
  propertyId: number
  uploadId: string
}

/** contract §8: an upload id that is malformed, unknown, or of another property or business is a 404. */
export async function requireUpload(deps: Pick<Services, 'database'>, ref: UploadRef): Promise<UploadSessionRow> {
  if (!UUID_RE.test(ref.uploadId)) throw UploadNotFound()
  const session = await findUploadSession(deps.database.db, { businessId: ref.businessId, propertyId: ref.propertyId, uploadId: ref.uploadId.toLowerCase() })
  if (!session) throw UploadNotFound()
  return session
}

/**
 * Opens an upload session on the property and presigns one PUT URL per file. Runs inside the
 * caller's transaction (the route's Idempotency-Key claim), so a replay finds the same session.
 */
export async function startImageUpload(
  deps: Pick<Services, 'config' | 'storage'>,
  tx: Db,
  upload: { businessId: number; propertyId: number; files: CreateImageUpload['files'] },
): Promise<CreatedImageUpload> {
  const property = await findProperty(tx, upload.businessId, upload.propertyId)
  if (!property) throw notFound('Property')
  const ttlSeconds = deps.config.uploadUrlTtlSeconds
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000)
  const session = await createUploadSession(tx, {
    businessId: upload.businessId,
    propertyId: property.id,
    expiresAt,
    files: upload.files.map((f) => ({ filename: f.filename, contentType: f.content_type, declaredSize: f.size, originalKey: newOriginalKey() })),
  })
  const files = await Promise.all(
    session.files.map(async (f) => {
      const put = await deps.storage.presignPut(f.originalKey, { contentType: f.contentType, maxSize: f.declaredSize, expiresInSeconds: ttlSeconds })
      return { file_id: f.id, method: 'PUT' as const, url: put.url, headers: { 'content-type': put.headers['content-type'] } }
    }),
  )
  return { status: 'ok', upload_id: session.id, expires_at: expiresAt.toISOString(), files }
}

/** Queues the checks of the uploaded files; repeating it is harmless. An expired upload is a 404. */
export async function completeImageUpload(deps: Pick<Services, 'database' | 'queues'>, ref: UploadRef): Promise<CompletedImageUpload> {
  const { db } = deps.database
  const session = await requireUpload(deps, ref)
  const state = effectiveState(session)
  if (state === 'expired') throw UploadNotFound()
  if (state === 'pending' || state === 'processing') {
    await startProcessing(db, session.id)
    let job: Job
    try {
      // Also on `processing`: a repeated call re-queues a job that might have been lost; the job id makes it one job.
      job = await deps.queues.enqueue('upload-complete', { uploadId: session.id })
    } catch (error) {
      if (state === 'pending') await revertProcessing(db, session.id).catch(() => {})
      throw error
    }
    // The id is kept by a job that already failed for good (the worker could not record it, e.g.
    // PostgreSQL was down then): nothing would run, so the upload takes the terminal state now.
    if (state === 'processing' && (await job.getState().catch(() => 'unknown')) === 'failed') {
      // `add` answers a duplicate id with the job it would have made: read the stored one.
      const stored = await deps.queues
        .get(JOBS['upload-complete'].queue)
        .getJob(JOBS['upload-complete'].jobId({ uploadId: session.id }))
        .catch(() => undefined)
      await exhaustUpload(deps, session.id, stored?.attemptsMade ?? attemptsOf('upload-complete'))
      const settled = await loadUploadSession(db, session.id)
      if (settled && settled.state !== 'processing') return { status: 'ok', upload_id: session.id, state: settled.state as 'completed' | 'failed' }
    }
  }
  return { status: 'ok', upload_id: session.id, state: state === 'pending' ? 'processing' : state }
}

export async function getImageUpload(deps: Pick<Services, 'database'>, ref: UploadRef): Promise<ImageUploadStatus> {
  const session = await requireUpload(deps, ref)
  return {
    upload_id: session.id,
    state: effectiveState(session),
    files: session.files.map((f) => ({
      file_id: f.id,
      state: f.state,
      ...(f.state === 'ready' && f.imageId ? { image_id: f.imageId } : {}),
      ...(f.state === 'failed' && f.error ? { error: f.error } : {}),
    })),
  }
}

/** Storage round trips per session in flight at once (an upload has at most 50 files). */
const CHECK_CONCURRENCY = 4

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i])
      }
    }),
  )
  return out
}

export type UploadProcessed = { skipped: string } | { checked: number; failed: number; images: number }

/**
 * The upload-complete job: checks every file of a completed upload, then creates the image rows
 * in upload order and queues their watermarking. A bad file is `failed` with a reason and its
 * object deleted; the others go on. Safe to run twice: checked files keep their state, image
 * rows are unique per file.
 */
export async function processCompletedUpload(
  deps: Pick<Services, 'config' | 'database' | 'queues' | 'storage'> & ImportDeps,
  uploadId: string,
): Promise<UploadProcessed> {
  const { db } = deps.database
  const session = await loadUploadSession(db, uploadId)
  // Gone (property deleted) or not completed by the client: nothing to do.
  if (session?.state !== 'processing') return { skipped: session?.state ?? 'missing' }

  const toCheck = session.files.filter((f) => f.state === 'processing' && f.imageId === null)
  // An import's files are fetched first (contract §9.2), then checked exactly like uploads.
  const verdicts = await mapLimit(toCheck, CHECK_CONCURRENCY, async (f): Promise<UploadVerdict> => {
    if (session.kind === 'import' && f.sourceUrl !== null) {
      const fetched = await fetchImportedFile(deps, { originalKey: f.originalKey, sourceUrl: f.sourceUrl })
      if (!fetched.ok) return { ok: false, reason: fetched.reason, deleteObject: false }
    }
    return checkUploadedFile(deps, f)
  })
  const passed: UploadFileRow[] = []
  for (let i = 0; i < toCheck.length; i++) {
    const file = toCheck[i]
    const verdict = verdicts[i]
    if (verdict.ok) {
      passed.push(file)
      continue
    }
    await failFile(db, file.id, verdict.reason)
    // The sweep retries a delete that fails here (purged_at stays null).
    if (verdict.deleteObject) await deps.storage.delete('private', file.originalKey).catch(() => {})
  }

  // Files that already had an image (an earlier run) are re-queued too: the job id dedupes.
  const already = session.files.filter((f) => f.state === 'processing' && f.imageId !== null)
  const imageIds = await createImagesForFiles(
    db,
    session,
    [...already, ...passed].sort((a, b) => a.position - b.position),
  )
  if (imageIds.length)
    await deps.queues.enqueueBulk(
      'image-watermark',
      imageIds.map((imageId) => ({ imageId })),
    )
  await settleSession(db, session.id)
  return { checked: toCheck.length, failed: toCheck.length - passed.length, images: imageIds.length }
}

export type ImageProcessed = { skipped: string } | { failed: true } | { width: number; height: number }

/**
 * The image-watermark job: makes the image's public copy in a worker thread (pixel limit from
 * the header first, auto-orient, ≤ 1920 px, metadata stripped, the business's watermark),
 * stores it in public storage, then marks the image ready and rebuilds the property's catalogue
 * row in one transaction, so the upload never reads `completed` before `images[]` lists the image
 * and no crash can leave the catalogue without it. A refused image is `failed` with a reason and
 * its original deleted. Safe to run twice: the public key is derived from the image id, so a
 * retry overwrites the same object, and a ready image is left alone.
 */
export async function makePublicCopy(
  deps: Pick<Services, 'config' | 'database' | 'storage' | 'queues' | 'logger'> & { imagePool: Pick<ImagePool, 'run'> },
  imageId: string,
): Promise<ImageProcessed> {
  const { db } = deps.database
  const image = await loadImageToProcess(db, imageId)
  if (image?.state !== 'processing') return { skipped: image?.state ?? 'missing' }

  const original = await deps.storage.get('private', image.originalKey)
  if (!original) {
    await failImage(deps.database, image, 'The file was not uploaded')
    return { failed: true }
  }
  // contract §9.2: an import with `watermark: false` keeps an unmarked public copy.
  const watermark = image.watermarked ? await watermarkOf(deps, image) : null
  let result: TransformResult
  try {
    result = await deps.imagePool.run(original, { maxPixels: deps.config.imageMaxPixels, watermark })
  } catch (error) {
    if (!(error instanceof ImageRejectedError)) throw error // thread crash, out of memory: retried
    await failImage(deps.database, image, error.message)
    await deps.storage.delete('private', image.originalKey).catch(() => {})
    return { failed: true }
  }
  const publicKey = publicKeyOf(deps.config.appSecret, image.id)
  await deps.storage.put('public', publicKey, result.data, OUTPUT_CONTENT_TYPE)
  const ready = { publicKey, publicUrl: deps.storage.publicUrl(publicKey), width: result.width, height: result.height }
  let orphaned: ScheduledDeletion[] = []
  await db.transaction(async (tx) => {
    if (!(await markImageReady(tx, image, ready))) {
      // The image was deleted (or failed) while its copy was made: nothing references the copy
      // just written, so it goes to the cleanup. A copy of an image already ready is its own.
      if (!(await imageHoldsPublicKey(tx, image.id, publicKey))) orphaned = await scheduleDeletions(tx, [{ area: 'public', key: publicKey }])
      return
    }
    await syncCatalogueEntry(tx, image.propertyId)
    await recordEvent(tx, image.businessId, {
      type: 'image.ready',
      object: { id: image.id, property_id: image.propertyId, state: 'ready', url: ready.publicUrl },
    })
  })
  if (orphaned.length) {
    await queueDeletions(deps, orphaned)
    return { skipped: 'deleted' }
  }
  return { width: result.width, height: result.height }
}

/** The image fails, and the catalogue row loses it (the primary role may move) in the same transaction. */
async function failImage(
  database: Database,
  image: Pick<ImageToProcess, 'id' | 'uploadFileId' | 'propertyId' | 'businessId'>,
  reason: string,
  options: { exhausted?: boolean } = {},
): Promise<void> {
  await database.db.transaction(async (tx) => {
    if (!(await markImageFailed(tx, image, reason, options))) return
    await syncCatalogueEntry(tx, image.propertyId)
    await recordEvent(tx, image.businessId, { type: 'image.failed', object: { id: image.id, property_id: image.propertyId, state: 'failed', error: reason } })
  })
}

/** What a client reads on a file whose job gave up: no internal detail (storage messages may name keys), and what happens next. */
const attemptsText = (n: number) => `${n} attempt${n === 1 ? '' : 's'}`
const EXHAUSTED_CHECK = (attempts: number) => `The file could not be checked (${attemptsText(attempts)} failed); it is kept for an operator to retry`
const EXHAUSTED_IMAGE = (attempts: number) => `The image could not be processed (${attemptsText(attempts)} failed); it is kept for an operator to retry`

/** The upload-complete job of the session failed for good: its unchecked files fail, kept for a retry. */
export async function exhaustUpload(deps: { database: Database }, uploadId: string, attempts: number): Promise<void> {
  await deps.database.db.transaction((tx) => exhaustUploadFiles(tx, uploadId, EXHAUSTED_CHECK(attempts)))
}

/** The image-watermark job of the image failed for good: the image fails, kept for a retry. */
export async function exhaustImage(deps: { database: Database }, imageId: string, attempts: number): Promise<void> {
  const image = await loadImageToProcess(deps.database.db, imageId)
  if (image?.state !== 'processing') return
  await failImage(deps.database, image, EXHAUSTED_IMAGE(attempts), { exhausted: true })
}

/** The catalog's attempts of a kind: what a failed job made when it can no longer be read. */
const attemptsOf = (kind: JobKind) => JOBS[kind].options.attempts ?? 1

/**
 * What exhaustion means for the media queues (docs/operations.md "Exhausted jobs"): the upload's unchecked
 * files, the image or the video become `failed` with a reason and keep their original; a retry
 * puts them back to processing; a drop lets the sweep delete the originals. A storage deletion
 * keeps its row (attempts, last error) and the storage sweep queues it again.
 */
export const MEDIA_JOB_HOOKS: JobDataHooksTable = {
  'upload-complete': {
    exhausted: (deps, { uploadId }, failure) => exhaustUpload(deps, uploadId, failure.attemptsMade),
    reopen: async (deps, { uploadId }) => void (await deps.database.db.transaction((tx) => reopenUploadFiles(tx, uploadId))),
    abandon: (deps, { uploadId }) => abandonUploadFiles(deps.database.db, uploadId),
  },
  'image-watermark': {
    exhausted: (deps, { imageId }, failure) => exhaustImage(deps, imageId, failure.attemptsMade),
    reopen: async (deps, { imageId }) => void (await deps.database.db.transaction((tx) => reopenImage(tx, imageId))),
    abandon: (deps, { imageId }) => abandonImage(deps.database.db, imageId),
  },
  'video-transcode': VIDEO_JOB_HOOKS,
  'storage-cleanup': STORAGE_CLEANUP_HOOKS,
}

/** Work left processing this long without a job, or with a job that failed for good, is looked at by the sweep. */
const STUCK_AFTER_MS = 10 * 60 * 1000
const STUCK_BATCH = 500

/**
 * Maintenance task: nothing of an upload stays `processing` for ever. A session with unchecked
 * files or a processing image whose job is missing (the enqueue failed, Redis lost it) is queued
 * again; one whose job failed for good while its data stayed processing (the worker could not
 * record the exhaustion) is failed now, kept for a retry.
 */
export async function recoverMediaJobs(
  deps: Pick<Services, 'database' | 'queues' | 'logger'>,
  options: { olderThanMs?: number } = {},
): Promise<{ requeued: number; failed: number }> {
  const stuck = await stuckMediaWork(deps.database.db, options.olderThanMs ?? STUCK_AFTER_MS, STUCK_BATCH)
  let requeued = 0
  let failed = 0
  const check = async (kind: 'upload-complete' | 'image-watermark', ids: string[], exhaust: (id: string, attempts: number) => Promise<void>) => {
    const payloadOf = (id: string) => (kind === 'upload-complete' ? { uploadId: id } : { imageId: id })
    const jobIds = ids.map((id) => JOBS[kind].jobId(payloadOf(id) as never))
    const presence = await deps.queues.presenceOf(JOBS[kind].queue, jobIds)
    for (let i = 0; i < ids.length; i++) {
      const state = presence.get(jobIds[i])
      if (state === 'missing') {
        await deps.queues.enqueue(kind, payloadOf(ids[i]) as never)
        requeued++
      } else if (state === 'failed') {
        const job = await deps.queues.get(JOBS[kind].queue).getJob(jobIds[i])
        await exhaust(ids[i], job?.attemptsMade ?? attemptsOf(kind))
        failed++
      }
    }
  }
  await check('upload-complete', stuck.sessions, (id, n) => exhaustUpload(deps, id, n))
  await check('image-watermark', stuck.images, (id, n) => exhaustImage(deps, id, n))
  if (requeued || failed) deps.logger.warn('media jobs recovered', { requeued, failed })
  return { requeued, failed }
}

/**
 * The upload sweep: pending sessions past their deadline become `expired`, and the originals of
 * their files and of every failed file are deleted from private storage. A delete that fails is
 * retried on the next run (the file's purged_at stays null).
 */
export async function sweepUploads(deps: Pick<Services, 'database' | 'storage'>): Promise<{ expired: number; purged: number }> {
  const { db } = deps.database
  const expired = await expireSessions(db, expiredBefore())
  let purged = 0
  for (;;) {
    const batch = await originalsToPurge(db)
    if (batch.length === 0) break
    const done: string[] = []
    await Promise.all(
      batch.map(async (f) => {
        try {
          await deps.storage.delete('private', f.originalKey)
          done.push(f.fileId)
        } catch {}
      }),
    )
    await markPurged(db, done)
    purged += done.length
    if (done.length < batch.length) break // storage trouble: try again next run
  }
  await deleteOldExpiredSessions(db)
  return { expired: expired.length, purged }
}

/** A business and the logo its new photos carry (null: its name as text). */
export interface BusinessWatermark {
  businessId: number
  name: string
  watermarkKey: string | null
}

export async function findBusinessWatermark(deps: Pick<Services, 'database'>, businessId: number): Promise<BusinessWatermark | null> {
  const business = await findBusiness(deps.database.db, businessId)
  return business && { businessId: business.id, name: business.name, watermarkKey: business.watermarkKey }
}

/**
 * Stores the logo (re-encoded as PNG) under a new private key and makes it the business's mark;
 * workers pick it up at once since they cache logos by key. Images already public keep the mark
 * they were made with. Throws LogoRejectedError for a file that cannot be a logo.
 */
export async function setBusinessWatermark(
  deps: Pick<Services, 'database' | 'storage'>,
  business: BusinessWatermark,
  logo: Uint8Array,
): Promise<{ width: number; height: number }> {
  const { png, width, height } = await prepareLogo(logo)
  const key = newWatermarkKey()
  await deps.storage.put('private', key, png, 'image/png')
  await setWatermarkKey(deps.database.db, business.businessId, key)
  if (business.watermarkKey) await deps.storage.delete('private', business.watermarkKey).catch(() => {})
  return { width, height }
}

/** Back to the text mark with the business name. */
export async function clearBusinessWatermark(deps: Pick<Services, 'database' | 'storage'>, business: BusinessWatermark): Promise<void> {
  await setWatermarkKey(deps.database.db, business.businessId, null)
  if (business.watermarkKey) await deps.storage.delete('private', business.watermarkKey).catch(() => {})
}
