/**
 * upload-complete (contract §5): checks every file of a completed upload — the object exists,
 * is no larger than declared, and its first bytes say JPEG, PNG or WebP (never the declared
 * content type) within the pixel limit — then creates the image rows in upload order and queues
 * their watermarking. A bad file is `failed` with a reason and its object deleted; the others go
 * on. Safe to run twice: checked files keep their state, image rows are unique per file.
 */
import { UnrecoverableError, type Job } from 'bullmq'
import { Value } from '@sinclair/typebox/value'
import { createImagesForFiles, failFile, loadUploadSession, settleSession, type UploadFileRow } from '../../db/queries/images'
import { UploadCompletePayload } from '../../shared/platform/jobs'
import { SNIFF_BYTES, sniffImage } from '../../shared/media/sniff'
import type { WorkerDeps } from '../deps'

/** Storage round trips per session in flight at once (an upload has at most 50 files). */
const CHECK_CONCURRENCY = 4

type Verdict = { ok: true } | { ok: false; reason: string; deleteObject: boolean }

export async function checkUploadedFile(deps: Pick<WorkerDeps, 'storage' | 'config'>, file: Pick<UploadFileRow, 'originalKey' | 'declaredSize'>): Promise<Verdict> {
  const info = await deps.storage.head('private', file.originalKey)
  if (!info) return { ok: false, reason: 'The file was not uploaded', deleteObject: false }
  if (info.size > file.declaredSize) return { ok: false, reason: `The file is larger than its declared size (${info.size} > ${file.declaredSize} bytes)`, deleteObject: true }
  const head = await deps.storage.getHead('private', file.originalKey, SNIFF_BYTES)
  if (!head) return { ok: false, reason: 'The file was not uploaded', deleteObject: false }
  const sniffed = sniffImage(head)
  if (!sniffed) return { ok: false, reason: 'The file is not a JPEG, PNG or WebP image', deleteObject: true }
  if (sniffed.width !== undefined && sniffed.height !== undefined) {
    if (sniffed.width === 0 || sniffed.height === 0) return { ok: false, reason: 'The image has no pixels', deleteObject: true }
    if (sniffed.width * sniffed.height > deps.config.imageMaxPixels) {
      return { ok: false, reason: `The image is ${sniffed.width}×${sniffed.height} pixels; the limit is ${deps.config.imageMaxPixels} pixels`, deleteObject: true }
    }
  }
  return { ok: true }
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i])
    }
  }))
  return out
}

export async function processUploadComplete(deps: WorkerDeps, job: Pick<Job, 'data'>): Promise<unknown> {
  if (!Value.Check(UploadCompletePayload, job.data)) throw new UnrecoverableError('invalid upload-complete payload')
  const { db } = deps.database
  const session = await loadUploadSession(db, job.data.uploadId)
  // Gone (property deleted) or not completed by the client: nothing to do.
  if (!session || session.state !== 'processing') return { skipped: session?.state ?? 'missing' }

  const toCheck = session.files.filter((f) => f.state === 'processing' && f.imageId === null)
  const verdicts = await mapLimit(toCheck, CHECK_CONCURRENCY, (f) => checkUploadedFile(deps, f))
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
  const imageIds = await createImagesForFiles(db, session, [...already, ...passed].sort((a, b) => a.position - b.position))
  if (imageIds.length) await deps.queues.enqueueBulk('image-watermark', imageIds.map((imageId) => ({ imageId })))
  await settleSession(db, session.id)
  return { checked: toCheck.length, failed: toCheck.length - passed.length, images: imageIds.length }
}
