/**
 * A listing's videos (contract §9.3): links recognised from their URL (ready at once) and uploads
 * the `video-transcode` queue turns into an HLS rendition, an MP4 and a poster in public storage.
 * Managed like images: every change locks the property, rebuilds its catalogue row (public
 * `videos[]` lists the ready ones) and records its event in one transaction; objects nothing
 * references any more go to the storage cleanup in that same transaction.
 */
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Job } from 'bullmq'
import type { Database, Db } from '../../db/client'
import { deleteDeletion } from '../../db/queries/storage-deletions'
import {
  applyVideoOrder,
  deleteVideoRow,
  expiredPendingVideos,
  findVideo,
  insertLinkVideo,
  insertUploadVideo,
  listVideos,
  loadVideo,
  lockPropertyRow,
  markVideoFailed,
  markVideoReady,
  processingVideosBefore,
  releaseOriginal,
  reopenVideo,
  revertVideoProcessing,
  setVideoTitle,
  startVideoProcessing,
  type PropertyVideoRow,
} from '../../db/queries/videos'
import { recordEvent } from '../events/record'
import { syncCatalogueEntry } from '../listings/catalogue-rebuild'
import { AppError, fieldError, notFound } from '../platform/errors'
import { JOBS, type JobDataHooks } from '../platform/jobs'
import type { Logger } from '../platform/logger'
import type { Services } from '../platform/services'
import { checkOrder } from './images'
import { lockProperty, mediaChanged, requireProperty } from './media-writes'
import type { CompletedVideoUpload, CreatedVideoUpload, VideoLink, VideoUpdate, VideoUpload, VideoView } from './schemas'
import { queueDeletions, scheduleDeletions, type Deletion, type ScheduledDeletion } from './storage-cleanup'
import { newOriginalKey, newVideoPrefix } from './storage-keys'
import { RENDITION, SEGMENT_RE, ToolError, VideoRejectedError, probeVideo, renditionContentType, transcode, type Rendition } from './transcode'
import { COMPLETE_GRACE_MS } from './upload-expiry'
import { recogniseVideoLink } from './video-links'

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const VideoNotFound = () => notFound('Video')

/** The list in display order, `order` 1..n over the non-failed videos and 0 for failed ones (listed last). */
export function videoViews(rows: readonly PropertyVideoRow[]): VideoView[] {
  let order = 0
  return rows.map((r) => ({
    id: r.id,
    source: r.source,
    state: r.state,
    title: r.title,
    order: r.state === 'failed' ? 0 : ++order,
    ...(r.url !== null && r.state === 'ready' ? { url: r.url } : {}),
    ...(r.hlsUrl !== null && r.state === 'ready' ? { hls_url: r.hlsUrl } : {}),
    ...(r.thumbnailUrl !== null && r.state === 'ready' ? { thumbnail_url: r.thumbnailUrl } : {}),
    ...(r.embedUrl !== null && r.state === 'ready' ? { embed_url: r.embedUrl } : {}),
    ...(r.durationS !== null && r.state === 'ready' ? { duration_s: r.durationS } : {}),
    ...(r.state === 'failed' && r.error ? { error: r.error } : {}),
  }))
}

export async function videosOfProperty(db: Db, propertyId: number): Promise<VideoView[]> {
  return videoViews(await listVideos(db, propertyId))
}

export async function listPropertyVideos(deps: Pick<Services, 'database'>, businessId: number, propertyId: number): Promise<VideoView[]> {
  const { db } = deps.database
  await requireProperty(db, businessId, propertyId)
  return videosOfProperty(db, propertyId)
}

export interface VideoRef {
  businessId: number
  propertyId: number
  videoId: string
}

async function requireVideo(db: Db, ref: VideoRef): Promise<PropertyVideoRow> {
  if (!UUID_RE.test(ref.videoId)) throw VideoNotFound()
  const video = await findVideo(db, ref.propertyId, ref.videoId.toLowerCase())
  if (!video) throw VideoNotFound()
  return video
}

/**
 * POST …/videos: a YouTube, Vimeo or Matterport link, recognised without fetching it; ready at
 * once. Runs inside the caller's transaction (the Idempotency-Key claim).
 */
export async function addVideoLink(tx: Db, request: { businessId: number; propertyId: number; body: VideoLink }): Promise<{ status: 'ok'; id: string }> {
  const property = await lockProperty(tx, request.businessId, request.propertyId)
  // After the property: a foreign or missing listing is a 404 whatever the body says.
  const link = recogniseVideoLink(request.body.url)
  if (!link)
    throw fieldError(
      ['body', 'url'],
      'Not a recognised video link: a YouTube (watch?v=, youtu.be/, shorts/), Vimeo (vimeo.com/<id>) or Matterport (my.matterport.com/show/?m=<id>) https URL',
    )
  const id = await insertLinkVideo(tx, {
    businessId: request.businessId,
    propertyId: property.id,
    provider: link.provider,
    url: link.url,
    embedUrl: link.embedUrl,
    thumbnailUrl: link.thumbnailUrl,
    title: request.body.title ?? '',
  })
  await mediaChanged(tx, property, { videos: await videosOfProperty(tx, property.id) })
  return { status: 'ok', id }
}

/**
 * POST …/videos/uploads: a `pending` video and one presigned PUT URL into private storage (the
 * same rules as images). Runs inside the caller's transaction (the Idempotency-Key claim).
 */
export async function startVideoUpload(
  deps: Pick<Services, 'config' | 'storage'>,
  tx: Db,
  request: { businessId: number; propertyId: number; body: VideoUpload },
): Promise<CreatedVideoUpload> {
  const property = await lockProperty(tx, request.businessId, request.propertyId)
  const ttlSeconds = deps.config.uploadUrlTtlSeconds
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000)
  const originalKey = newOriginalKey()
  const id = await insertUploadVideo(tx, {
    businessId: request.businessId,
    propertyId: property.id,
    title: request.body.title ?? '',
    originalKey,
    contentType: request.body.content_type,
    declaredSize: request.body.size,
    uploadExpiresAt: expiresAt,
  })
  const put = await deps.storage.presignPut(originalKey, { contentType: request.body.content_type, maxSize: request.body.size, expiresInSeconds: ttlSeconds })
  return {
    status: 'ok',
    video_id: id,
    upload: { method: 'PUT', url: put.url, headers: { 'content-type': put.headers['content-type'] }, expires_at: expiresAt.toISOString() },
  }
}

/** A pending upload past its URL's deadline (with the same grace as images) can no longer be completed. */
const uploadExpired = (video: PropertyVideoRow, now = Date.now()) => video.uploadExpiresAt !== null && video.uploadExpiresAt.getTime() + COMPLETE_GRACE_MS < now

const NOT_COMPLETED = 'The upload was not completed in time'

/**
 * POST …/videos/{id}/complete: queues the transcode. Repeating it is harmless (the job id is the
 * video's) and answers the current state; a link cannot be completed (409); an upload never
 * completed in time fails now.
 */
export async function completeVideoUpload(deps: Pick<Services, 'database' | 'queues' | 'logger'>, ref: VideoRef): Promise<CompletedVideoUpload> {
  const { db } = deps.database
  const property = await requireProperty(db, ref.businessId, ref.propertyId)
  const video = await requireVideo(db, { ...ref, propertyId: property.id })
  if (video.source !== 'upload') throw new AppError('conflict', 'Only an uploaded video can be completed; a link is ready as soon as it is added')
  const answer = (state: CompletedVideoUpload['state']): CompletedVideoUpload => ({ status: 'ok', id: video.id, state })
  if (video.state === 'ready' || video.state === 'failed') return answer(video.state)
  if (video.state === 'pending' && uploadExpired(video)) {
    await failVideo(deps, video.id, NOT_COMPLETED)
    return answer('failed')
  }
  const moved = video.state === 'pending' && (await startVideoProcessing(db, video.id))
  let job: Job
  try {
    // Also on `processing`: a repeated call re-queues a job that might have been lost; the job id makes it one job.
    job = await deps.queues.enqueue('video-transcode', { videoId: video.id })
  } catch (error) {
    if (moved) await revertVideoProcessing(db, video.id).catch(() => {})
    throw error
  }
  if (!moved && (await job.getState().catch(() => 'unknown')) === 'failed') {
    // The job failed for good without the worker recording it (PostgreSQL was down then).
    const stored = await deps.queues
      .get(JOBS['video-transcode'].queue)
      .getJob(JOBS['video-transcode'].jobId({ videoId: video.id }))
      .catch(() => undefined)
    await exhaustVideo(deps, video.id, stored?.attemptsMade ?? attemptsOfTranscode())
    const settled = await loadVideo(db, video.id)
    if (settled && settled.state !== 'processing' && settled.state !== 'pending') return answer(settled.state)
  }
  return answer('processing')
}

export async function updateVideo(deps: Pick<Services, 'database'>, ref: VideoRef, patch: VideoUpdate): Promise<{ status: 'ok'; id: string }> {
  await deps.database.db.transaction(async (tx) => {
    const property = await lockProperty(tx, ref.businessId, ref.propertyId)
    const video = await requireVideo(tx, ref)
    if (patch.title === undefined || patch.title === video.title) return
    await setVideoTitle(tx, video.id, patch.title)
    await mediaChanged(tx, property, { videos: await videosOfProperty(tx, property.id) })
  })
  return { status: 'ok', id: ref.videoId.toLowerCase() }
}

export async function reorderVideos(
  deps: Pick<Services, 'database'>,
  businessId: number,
  propertyId: number,
  videoIds: string[],
): Promise<{ status: 'ok'; id: number }> {
  const wanted = videoIds.map((id) => id.toLowerCase())
  await deps.database.db.transaction(async (tx) => {
    const property = await lockProperty(tx, businessId, propertyId)
    const rows = await listVideos(tx, property.id)
    checkOrder(wanted, rows, 'video_ids', 'video')
    const current = rows.filter((r) => r.state !== 'failed').map((r) => r.id)
    if (current.length === wanted.length && current.every((id, i) => id === wanted[i])) return
    await applyVideoOrder(tx, property.id, wanted)
    await mediaChanged(tx, property, { videos: await videosOfProperty(tx, property.id) })
  })
  return { status: 'ok', id: propertyId }
}

/**
 * What storage holds for a video, as deletions: its original (not before its upload URL expired,
 * since the URL may still write it) and its rendition's prefix.
 */
export function videoDeletions(video: Pick<PropertyVideoRow, 'state' | 'originalKey' | 'publicPrefix' | 'uploadExpiresAt'>): Deletion[] {
  const out: Deletion[] = []
  if (video.originalKey) {
    const notBefore = video.state === 'pending' && video.uploadExpiresAt ? new Date(video.uploadExpiresAt.getTime() + COMPLETE_GRACE_MS) : null
    out.push({ area: 'private', key: video.originalKey, notBefore })
  }
  if (video.publicPrefix) out.push({ area: 'public', key: video.publicPrefix, kind: 'prefix' })
  return out
}

/** DELETE: the video leaves `videos[]` at once; its original and rendition go to the storage cleanup. */
export async function deleteVideo(deps: Pick<Services, 'database' | 'queues' | 'logger'>, ref: VideoRef): Promise<{ status: 'ok'; id: string }> {
  const scheduled = await deps.database.db.transaction(async (tx) => {
    const property = await lockProperty(tx, ref.businessId, ref.propertyId)
    const video = await requireVideo(tx, ref)
    await deleteVideoRow(tx, video.id)
    const scheduled = await scheduleDeletions(tx, videoDeletions(video))
    await mediaChanged(tx, property, { videos: await videosOfProperty(tx, property.id) })
    return scheduled
  })
  await queueDeletions(deps, scheduled)
  return { status: 'ok', id: ref.videoId.toLowerCase() }
}

/** The `video.ready` / `video.failed` object (contract §10.1). */
function videoEventObject(video: Pick<PropertyVideoRow, 'id' | 'propertyId'>, fields: Record<string, unknown>) {
  return { id: video.id, property_id: video.propertyId, ...fields }
}

/**
 * The video fails with `reason` and records `video.failed`, in one transaction. Its original is
 * handed to the cleanup, unless `keepOriginal` (its job gave up, not the file: kept for a retry).
 */
async function failVideo(
  deps: Pick<Services, 'database' | 'queues' | 'logger'> | { database: Database },
  videoId: string,
  reason: string,
  options: { keepOriginal?: boolean } = {},
): Promise<boolean> {
  let scheduled: ScheduledDeletion[] = []
  const changed = await deps.database.db.transaction(async (tx) => {
    const video = await loadVideo(tx, videoId, { forUpdate: true })
    if (!video || !(await markVideoFailed(tx, video.id, reason, options))) return false
    if (!options.keepOriginal && video.originalKey) scheduled = await scheduleDeletions(tx, [{ area: 'private', key: video.originalKey }])
    await recordEvent(tx, video.businessId, { type: 'video.failed', object: videoEventObject(video, { state: 'failed', error: reason }) })
    return true
  })
  // Without a queue (the exhaustion hooks), the maintenance sweep queues the deletion.
  if ('queues' in deps) await queueDeletions(deps, scheduled)
  return changed
}

const attemptsText = (n: number) => `${n} attempt${n === 1 ? '' : 's'}`
const EXHAUSTED_VIDEO = (attempts: number) => `The video could not be processed (${attemptsText(attempts)} failed); it is kept for an operator to retry`
const attemptsOfTranscode = () => JOBS['video-transcode'].options.attempts ?? 1

/** The transcode job failed for good: the video fails, its original kept for `cli queues retry`. */
export async function exhaustVideo(deps: { database: Database }, videoId: string, attempts: number): Promise<void> {
  await failVideo(deps, videoId, EXHAUSTED_VIDEO(attempts), { keepOriginal: true })
}

/** docs/operations.md "Exhausted jobs" for video-transcode: failed and kept; retry reopens it; drop hands the original to the cleanup. */
export const VIDEO_JOB_HOOKS: JobDataHooks<'video-transcode'> = {
  exhausted: (deps, { videoId }, failure) => exhaustVideo(deps, videoId, failure.attemptsMade),
  reopen: async (deps, { videoId }) => void (await deps.database.db.transaction((tx) => reopenVideo(tx, videoId))),
  abandon: async (deps, { videoId }) => {
    await deps.database.db.transaction(async (tx) => {
      const key = await releaseOriginal(tx, videoId)
      // Queued by the storage sweep (these hooks have no queue at hand).
      if (key) await scheduleDeletions(tx, [{ area: 'private', key }])
    })
  },
}

// ---- the video-transcode job ----

/** Transcode work directories: `<tmp>/plm-video-<pid>-<random>`, so a restarted worker can remove a dead one's. */
const WORK_DIR_PREFIX = 'plm-video-'

export type VideoProcessed = { skipped: string } | { failed: string } | { ready: true; durationS: number; files: number }

/**
 * The video-transcode job: downloads the original to a work directory, probes it (a real video
 * stream, ≤ 15 min, ≤ 4K), encodes the rendition and poster there, and only then writes them to
 * public storage under a new unguessable prefix per attempt. The prefix is written to
 * `storage_deletions` before the first object goes up and removed in the transaction that marks
 * the video ready, so an attempt killed at any point (worker `kill -9`) leaves nothing the video
 * references and nothing the cleanup will not remove; the next attempt (BullMQ's stalled check
 * hands the job to another worker) starts again from the original. A file that is not a usable
 * video fails with a reason and its original is deleted; a ready video's original is deleted too.
 */
export async function processVideoTranscode(deps: Pick<Services, 'database' | 'storage' | 'queues' | 'logger'>, videoId: string): Promise<VideoProcessed> {
  const { db } = deps.database
  const video = await loadVideo(db, videoId)
  if (video?.state !== 'processing') return { skipped: video?.state ?? 'missing' }
  if (!video.originalKey) {
    await failVideo(deps, video.id, 'The file was not uploaded')
    return { failed: 'The file was not uploaded' }
  }
  const work = await mkdtemp(join(tmpdir(), `${WORK_DIR_PREFIX}${process.pid}-`))
  try {
    const input = join(work, 'original')
    const reject = async (reason: string): Promise<VideoProcessed> => {
      await failVideo(deps, video.id, reason)
      return { failed: reason }
    }
    if (!(await deps.storage.getToFile('private', video.originalKey, input))) return reject('The file was not uploaded')
    const size = (await stat(input)).size
    if (size === 0) return reject('The file is empty')
    if (video.declaredSize !== null && size > video.declaredSize)
      return reject(`The file is larger than its declared size (${size} > ${video.declaredSize} bytes)`)
    const out = join(work, 'out')
    await mkdir(out)
    let rendition: Rendition
    try {
      rendition = await transcode(input, out, await probeVideo(input))
    } catch (error) {
      if (error instanceof VideoRejectedError) return reject(error.message)
      throw error
    }
    return await publishRendition(deps, video, out, rendition.durationS)
  } finally {
    await rm(work, { recursive: true, force: true }).catch(() => {})
  }
}

/** The rendition's files, each with its content type. */
async function renditionFiles(dir: string): Promise<{ name: string; contentType: string }[]> {
  const names = await readdir(dir)
  const files = names.filter((n) => n === RENDITION.playlist || n === RENDITION.mp4 || n === RENDITION.poster || SEGMENT_RE.test(n))
  for (const required of [RENDITION.playlist, RENDITION.mp4, RENDITION.poster]) {
    if (!files.includes(required)) throw new ToolError('ffmpeg', { code: 0, signal: null, timedOut: false, stderr: `${required} was not written` })
  }
  // The playlist last: a player never finds it before its segments.
  const typed = (name: string) => {
    const contentType = renditionContentType(name)
    if (!contentType) throw new Error(`${name} has no rendition content type`)
    return { name, contentType }
  }
  return files.sort((a, b) => Number(a === RENDITION.playlist) - Number(b === RENDITION.playlist)).map(typed)
}

const UPLOAD_CONCURRENCY = 4

async function publishRendition(
  deps: Pick<Services, 'database' | 'storage' | 'queues' | 'logger'>,
  video: PropertyVideoRow,
  dir: string,
  durationS: number,
): Promise<VideoProcessed> {
  const { db } = deps.database
  const files = await renditionFiles(dir)
  const prefix = newVideoPrefix()
  // Claimed before the first object goes up: if this attempt dies, the cleanup removes the prefix.
  const [claim] = await db.transaction((tx) => scheduleDeletions(tx, [{ area: 'public', key: prefix, kind: 'prefix' }]))
  for (let i = 0; i < files.length; i += UPLOAD_CONCURRENCY) {
    await Promise.all(files.slice(i, i + UPLOAD_CONCURRENCY).map((f) => deps.storage.putFile('public', `${prefix}${f.name}`, join(dir, f.name), f.contentType)))
  }
  const urls = {
    url: deps.storage.publicUrl(`${prefix}${RENDITION.mp4}`),
    hlsUrl: deps.storage.publicUrl(`${prefix}${RENDITION.playlist}`),
    thumbnailUrl: deps.storage.publicUrl(`${prefix}${RENDITION.poster}`),
  }
  let followUp: ScheduledDeletion[] = []
  const outcome = await db.transaction(async (tx): Promise<'ready' | 'gone' | 'reclaimed'> => {
    // Property first, as every media change: catalogue rebuilds of one listing run in turn.
    await lockPropertyRow(tx, video.propertyId)
    // The claim is still ours only if the cleanup has not taken it (it would wait for us, or we for it).
    if (!(await deleteDeletion(tx, claim.id))) {
      followUp = await scheduleDeletions(tx, [{ area: 'public', key: prefix, kind: 'prefix' }])
      return 'reclaimed'
    }
    const current = await loadVideo(tx, video.id, { forUpdate: true })
    if (!current || !(await markVideoReady(tx, video.id, { publicPrefix: prefix, ...urls, durationS }))) {
      // Deleted (or failed) meanwhile: nothing will reference this rendition.
      followUp = await scheduleDeletions(tx, [{ area: 'public', key: prefix, kind: 'prefix' }])
      return 'gone'
    }
    followUp = await scheduleDeletions(tx, current.originalKey ? [{ area: 'private', key: current.originalKey }] : [])
    await syncCatalogueEntry(tx, current.propertyId)
    await recordEvent(tx, current.businessId, {
      type: 'video.ready',
      object: videoEventObject(current, { state: 'ready', url: urls.url, hls_url: urls.hlsUrl, thumbnail_url: urls.thumbnailUrl, duration_s: durationS }),
    })
    return 'ready'
  })
  await queueDeletions(deps, followUp)
  if (outcome === 'reclaimed')
    throw new Error('the rendition was cleaned up before it could be recorded (its upload outlasted the storage sweep); transcoding again')
  if (outcome === 'gone') return { skipped: 'deleted' }
  return { ready: true, durationS, files: files.length }
}

// ---- sweeps ----

const STUCK_AFTER_MS = 10 * 60 * 1000
const SWEEP_BATCH = 500

/**
 * Maintenance task (docs/operations.md "Exhausted jobs": nothing stays processing for ever): uploads never
 * completed fail once their URL is past its deadline (their original, if any, is deleted), and
 * videos processing without a live job are queued again, or failed (kept) when their job failed
 * for good unrecorded. Also removes the work directories of transcodes whose process died.
 */
export async function sweepVideos(
  deps: Pick<Services, 'database' | 'queues' | 'logger'>,
  options: { olderThanMs?: number } = {},
): Promise<{ expired: number; requeued: number; failed: number; workDirs: number }> {
  const { db } = deps.database
  let expired = 0
  for (const id of await expiredPendingVideos(db, new Date(Date.now() - COMPLETE_GRACE_MS), SWEEP_BATCH)) {
    if (await failVideo(deps, id, NOT_COMPLETED)) expired++
  }
  const stuck = await processingVideosBefore(db, new Date(Date.now() - (options.olderThanMs ?? STUCK_AFTER_MS)), SWEEP_BATCH)
  const def = JOBS['video-transcode']
  const jobIds = stuck.map((videoId) => def.jobId({ videoId }))
  const presence = await deps.queues.presenceOf(def.queue, jobIds)
  let requeued = 0
  let failed = 0
  for (let i = 0; i < stuck.length; i++) {
    const state = presence.get(jobIds[i])
    if (state === 'missing') {
      await deps.queues.enqueue('video-transcode', { videoId: stuck[i] })
      requeued++
    } else if (state === 'failed') {
      const job = await deps.queues.get(def.queue).getJob(jobIds[i])
      await exhaustVideo(deps, stuck[i], job?.attemptsMade ?? attemptsOfTranscode())
      failed++
    }
  }
  const workDirs = await removeDeadWorkDirs(deps.logger)
  if (expired || requeued || failed) deps.logger.warn('videos swept', { expired, requeued, failed })
  return { expired, requeued, failed, workDirs }
}

/** Work directories left by transcodes whose process is gone (a killed worker): their files are useless now. */
async function removeDeadWorkDirs(logger: Logger): Promise<number> {
  let removed = 0
  for (const name of await readdir(tmpdir()).catch(() => [] as string[])) {
    const pid = Number(name.startsWith(WORK_DIR_PREFIX) ? name.slice(WORK_DIR_PREFIX.length).split('-')[0] : NaN)
    if (!Number.isInteger(pid) || pid === process.pid || processAlive(pid)) continue
    await rm(join(tmpdir(), name), { recursive: true, force: true }).then(
      () => removed++,
      (e: Error) => logger.warn('could not remove a transcode work directory', { dir: name, error: e.message }),
    )
  }
  return removed
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
