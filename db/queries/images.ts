/**
 * Data access for image uploads (contract §5): upload sessions and their files, the property's
 * images, and the sweeps. Original keys are read here only to hand them to storage; they are
 * never part of an API answer.
 */
import { and, asc, eq, inArray, isNotNull, isNull, sql } from 'drizzle-orm'
import type { Db } from '../client'
import { businesses, propertyImages, uploadFiles, uploadSessions } from '../schema'

export type SessionState = (typeof uploadSessions.$inferSelect)['state']
export type FileState = (typeof uploadFiles.$inferSelect)['state']

export interface NewUploadFile {
  filename: string
  contentType: string
  declaredSize: number
  originalKey: string
  /** Imports (contract §9.2): the URL to fetch, the title and whether the public copy is marked. */
  sourceUrl?: string
  title?: string
  watermark?: boolean
}

export interface UploadFileRow {
  id: string
  position: number
  contentType: string
  declaredSize: number
  originalKey: string
  state: FileState
  error: string | null
  imageId: string | null
  /** An import's URL; null for an uploaded file. */
  sourceUrl: string | null
}

export type SessionKind = (typeof uploadSessions.$inferSelect)['kind']

export interface UploadSessionRow {
  id: string
  businessId: number
  propertyId: number
  state: SessionState
  kind: SessionKind
  expiresAt: Date
  files: UploadFileRow[]
}

const fileColumns = {
  id: uploadFiles.id,
  position: uploadFiles.position,
  contentType: uploadFiles.contentType,
  declaredSize: uploadFiles.declaredSize,
  originalKey: uploadFiles.originalKey,
  state: uploadFiles.state,
  error: uploadFiles.error,
  imageId: uploadFiles.imageId,
  sourceUrl: uploadFiles.sourceUrl,
}

const sessionColumns = {
  id: uploadSessions.id,
  businessId: uploadSessions.businessId,
  propertyId: uploadSessions.propertyId,
  state: uploadSessions.state,
  kind: uploadSessions.kind,
  expiresAt: uploadSessions.expiresAt,
}

/**
 * An upload session and its files. An import (contract §9.2) starts `processing` with its files:
 * there is nothing for the client to PUT, the worker fetches them.
 */
export async function createUploadSession(
  db: Db,
  params: { businessId: number; propertyId: number; expiresAt: Date; files: NewUploadFile[]; kind?: SessionKind },
): Promise<{ id: string; files: (UploadFileRow & { filename: string })[] }> {
  const kind = params.kind ?? 'upload'
  const started = kind === 'import' ? { state: 'processing' as const, completedAt: sql`now()` } : {}
  const [session] = await db
    .insert(uploadSessions)
    .values({ businessId: params.businessId, propertyId: params.propertyId, expiresAt: params.expiresAt, kind, ...started })
    .returning({ id: uploadSessions.id })
  const files = await db
    .insert(uploadFiles)
    .values(params.files.map((f, i) => ({ sessionId: session.id, position: i + 1, ...f, ...(kind === 'import' ? { state: 'processing' as const } : {}) })))
    .returning({ ...fileColumns, filename: uploadFiles.filename })
  files.sort((a, b) => a.position - b.position)
  return { id: session.id, files }
}

async function filesOf(db: Db, sessionId: string): Promise<UploadFileRow[]> {
  return db.select(fileColumns).from(uploadFiles).where(eq(uploadFiles.sessionId, sessionId)).orderBy(asc(uploadFiles.position))
}

/** The session of this business and property (tenancy: anything else is "not found"). */
export async function findUploadSession(db: Db, where: { businessId: number; propertyId: number; uploadId: string }): Promise<UploadSessionRow | null> {
  const [session] = await db
    .select(sessionColumns)
    .from(uploadSessions)
    .where(and(eq(uploadSessions.id, where.uploadId), eq(uploadSessions.businessId, where.businessId), eq(uploadSessions.propertyId, where.propertyId)))
  if (!session) return null
  return { ...session, files: await filesOf(db, session.id) }
}

/** The session by id alone (workers). */
export async function loadUploadSession(db: Db, uploadId: string): Promise<UploadSessionRow | null> {
  const [session] = await db.select(sessionColumns).from(uploadSessions).where(eq(uploadSessions.id, uploadId))
  if (!session) return null
  return { ...session, files: await filesOf(db, session.id) }
}

/** pending → processing for the session and its files; a no-op in any other state. Returns whether it moved. */
export async function startProcessing(db: Db, sessionId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const moved = await tx
      .update(uploadSessions)
      .set({ state: 'processing', completedAt: sql`now()` })
      .where(and(eq(uploadSessions.id, sessionId), eq(uploadSessions.state, 'pending')))
      .returning({ id: uploadSessions.id })
    if (moved.length === 0) return false
    await tx
      .update(uploadFiles)
      .set({ state: 'processing' })
      .where(and(eq(uploadFiles.sessionId, sessionId), eq(uploadFiles.state, 'pending')))
    return true
  })
}

/** Back to pending when the completion job could not be queued (the client may retry). */
export async function revertProcessing(db: Db, sessionId: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx
      .update(uploadSessions)
      .set({ state: 'pending', completedAt: null })
      .where(and(eq(uploadSessions.id, sessionId), eq(uploadSessions.state, 'processing')))
    await tx
      .update(uploadFiles)
      .set({ state: 'pending' })
      .where(and(eq(uploadFiles.sessionId, sessionId), eq(uploadFiles.state, 'processing'), isNull(uploadFiles.imageId)))
  })
}

/**
 * Once no file is pending or processing: `completed` if any file is ready, else `failed`.
 * Called in the transaction that just finished a file. The session row is locked first: two
 * files finishing at once each saw the other still `processing` (write skew under READ
 * COMMITTED) and the session stayed `processing` forever. After the lock, the update's fresh
 * snapshot sees the other transaction's committed file.
 */
export async function settleSession(db: Db, sessionId: string): Promise<void> {
  await db.execute(sql`select 1 from upload_sessions where id = ${sessionId} for update`)
  await db.execute(sql`
    update upload_sessions s
    set state = case when exists (select 1 from upload_files f where f.session_id = s.id and f.state = 'ready') then 'completed' else 'failed' end
    where s.id = ${sessionId} and s.state = 'processing'
      and not exists (select 1 from upload_files f where f.session_id = s.id and f.state in ('pending', 'processing'))`)
}

/** `exhausted`: the file failed because its job gave up, not because of what it holds (its original is kept for a retry). */
export async function failFile(db: Db, fileId: string, reason: string, options: { exhausted?: boolean } = {}): Promise<void> {
  await db
    .update(uploadFiles)
    .set({ state: 'failed', error: reason, exhaustedAt: options.exhausted ? sql`now()` : null })
    .where(and(eq(uploadFiles.id, fileId), inArray(uploadFiles.state, ['pending', 'processing'])))
}

/**
 * The upload-complete job of the session exhausted its retries: every file it had not checked
 * yet (still processing, no image) fails with `reason`, marked exhausted, and the session settles.
 * Returns how many files failed. Run it in a transaction.
 */
export async function exhaustUploadFiles(tx: Db, sessionId: string, reason: string): Promise<number> {
  await tx.execute(sql`select 1 from upload_sessions where id = ${sessionId} for update`)
  const failed = await tx
    .update(uploadFiles)
    .set({ state: 'failed', error: reason, exhaustedAt: sql`now()` })
    .where(and(eq(uploadFiles.sessionId, sessionId), eq(uploadFiles.state, 'processing'), isNull(uploadFiles.imageId)))
    .returning({ id: uploadFiles.id })
  await settleSession(tx, sessionId)
  return failed.length
}

/**
 * An operator retries the session's upload-complete job: the files its exhaustion failed go back
 * to processing and the session with them. Returns how many files reopened. Run it in a transaction.
 */
export async function reopenUploadFiles(tx: Db, sessionId: string): Promise<number> {
  await tx.execute(sql`select 1 from upload_sessions where id = ${sessionId} for update`)
  const reopened = await tx
    .update(uploadFiles)
    .set({ state: 'processing', error: null, exhaustedAt: null })
    .where(
      and(
        eq(uploadFiles.sessionId, sessionId),
        eq(uploadFiles.state, 'failed'),
        isNull(uploadFiles.imageId),
        isNotNull(uploadFiles.exhaustedAt),
        isNull(uploadFiles.purgedAt),
      ),
    )
    .returning({ id: uploadFiles.id })
  if (reopened.length) await reopenSession(tx, sessionId)
  return reopened.length
}

/** A session that had settled works again (a file of it is processing once more). */
async function reopenSession(tx: Db, sessionId: string): Promise<void> {
  await tx
    .update(uploadSessions)
    .set({ state: 'processing' })
    .where(and(eq(uploadSessions.id, sessionId), inArray(uploadSessions.state, ['completed', 'failed'])))
}

/** An operator dropped the exhausted job: its files stay failed for good and the sweep may delete their originals. */
export async function abandonUploadFiles(db: Db, sessionId: string): Promise<void> {
  await db
    .update(uploadFiles)
    .set({ exhaustedAt: null })
    .where(and(eq(uploadFiles.sessionId, sessionId), eq(uploadFiles.state, 'failed'), isNotNull(uploadFiles.exhaustedAt)))
}

/**
 * Creates the image rows of files that passed the checks, appended after the property's images
 * in upload order (contract §5). The property row is locked so concurrent sessions append in
 * turn; a file that already has its image keeps it (the job may run twice). The first image of
 * a property without a primary one becomes primary. Returns the ids of images still to process.
 */
export async function createImagesForFiles(
  db: Db,
  session: Pick<UploadSessionRow, 'id' | 'businessId' | 'propertyId'>,
  files: Pick<UploadFileRow, 'id' | 'originalKey'>[],
): Promise<string[]> {
  if (files.length === 0) return []
  return db.transaction(async (tx) => {
    const locked = await tx.execute(sql`select id from properties where id = ${session.propertyId} for update`)
    if (locked.length === 0) return []
    for (const file of files) {
      await tx.execute(sql`
        insert into property_images (business_id, property_id, upload_file_id, original_key, position, is_primary, state, title, watermarked)
        select ${session.businessId}, ${session.propertyId}, ${file.id}, ${file.originalKey},
          coalesce((select max(position) from property_images where property_id = ${session.propertyId}), 0) + 1,
          not exists (select 1 from property_images where property_id = ${session.propertyId} and is_primary and state <> 'failed'),
          'processing', f.title, f.watermark
        from upload_files f where f.id = ${file.id}
        on conflict (upload_file_id) do nothing`)
    }
    const rows = await tx
      .select({ id: propertyImages.id, fileId: propertyImages.uploadFileId, state: propertyImages.state })
      .from(propertyImages)
      .where(
        inArray(
          propertyImages.uploadFileId,
          files.map((f) => f.id),
        ),
      )
      .orderBy(asc(propertyImages.position))
    for (const { id, fileId } of rows) {
      // Always set: the rows were selected by their upload file.
      if (fileId !== null) await tx.update(uploadFiles).set({ imageId: id }).where(eq(uploadFiles.id, fileId))
    }
    return rows.filter((r) => r.state === 'processing').map((r) => r.id)
  })
}

export interface ImageToProcess {
  id: string
  businessId: number
  propertyId: number
  uploadFileId: string | null
  originalKey: string
  state: 'processing' | 'ready' | 'failed'
  /** false: an unmarked public copy (an import with `watermark: false`, contract §9.2). */
  watermarked: boolean
  businessName: string
  watermarkKey: string | null
}

export async function loadImageToProcess(db: Db, imageId: string): Promise<ImageToProcess | null> {
  const [row] = await db
    .select({
      id: propertyImages.id,
      businessId: propertyImages.businessId,
      propertyId: propertyImages.propertyId,
      uploadFileId: propertyImages.uploadFileId,
      originalKey: propertyImages.originalKey,
      state: propertyImages.state,
      watermarked: propertyImages.watermarked,
      businessName: businesses.name,
      watermarkKey: businesses.watermarkKey,
    })
    .from(propertyImages)
    .innerJoin(businesses, eq(businesses.id, propertyImages.businessId))
    .where(eq(propertyImages.id, imageId))
  return row ?? null
}

export async function sessionOfFile(db: Db, fileId: string | null): Promise<string | null> {
  if (!fileId) return null
  const [row] = await db.select({ sessionId: uploadFiles.sessionId }).from(uploadFiles).where(eq(uploadFiles.id, fileId))
  return row?.sessionId ?? null
}

/**
 * processing → ready, with the file and its session. Returns whether the image changed. Run it in
 * the transaction that also rebuilds the property's catalogue row: the property row is locked
 * first, so two images of one property finishing together rebuild the row in turn and the second
 * rebuild sees the first image (each statement after the lock reads what was committed).
 */
export async function markImageReady(
  tx: Db,
  image: Pick<ImageToProcess, 'id' | 'uploadFileId' | 'propertyId'>,
  result: { publicKey: string; publicUrl: string; width: number; height: number },
): Promise<boolean> {
  await tx.execute(sql`select id from properties where id = ${image.propertyId} for update`)
  const updated = await tx
    .update(propertyImages)
    .set({ state: 'ready', error: null, publicKey: result.publicKey, publicUrl: result.publicUrl, width: result.width, height: result.height })
    .where(and(eq(propertyImages.id, image.id), eq(propertyImages.state, 'processing')))
    .returning({ id: propertyImages.id })
  if (updated.length === 0) return false
  if (!image.uploadFileId) return true
  await tx.update(uploadFiles).set({ state: 'ready', error: null, exhaustedAt: null }).where(eq(uploadFiles.id, image.uploadFileId))
  const sessionId = await sessionOfFile(tx, image.uploadFileId)
  if (sessionId) await settleSession(tx, sessionId)
  return true
}

/**
 * The image fails with `reason`: it never shows; a primary image hands its role to the next one in
 * order. `exhausted`: its job gave up (the original is kept for a retry). Returns whether the
 * image changed. Run it in the transaction that also rebuilds the property's catalogue row.
 */
export async function markImageFailed(
  tx: Db,
  image: Pick<ImageToProcess, 'id' | 'uploadFileId' | 'propertyId'>,
  reason: string,
  options: { exhausted?: boolean } = {},
): Promise<boolean> {
  await tx.execute(sql`select id from properties where id = ${image.propertyId} for update`)
  const updated = await tx
    .update(propertyImages)
    .set({ state: 'failed', isPrimary: false, error: reason })
    .where(and(eq(propertyImages.id, image.id), eq(propertyImages.state, 'processing')))
    .returning({ id: propertyImages.id })
  if (updated.length === 0) return false
  await assignPrimaryIfNone(tx, image.propertyId)
  if (!image.uploadFileId) return true
  await failFile(tx, image.uploadFileId, reason, options)
  const sessionId = await sessionOfFile(tx, image.uploadFileId)
  if (sessionId) await settleSession(tx, sessionId)
  return true
}

/** A property without a (non-failed) primary image gives the role to its first non-failed image in order. */
export async function assignPrimaryIfNone(tx: Db, propertyId: number): Promise<void> {
  await tx.execute(sql`
    update property_images set is_primary = true
    where id = (select id from property_images where property_id = ${propertyId} and state <> 'failed' order by position limit 1)
      and not exists (select 1 from property_images where property_id = ${propertyId} and is_primary and state <> 'failed')`)
}

/**
 * An operator retries the image's exhausted watermark job: the image, its file and its session
 * go back to processing. Only an image its job gave up on reopens (one refused for its content
 * stays failed: its original is gone). Returns whether it reopened. Run it in a transaction.
 */
export async function reopenImage(tx: Db, imageId: string): Promise<boolean> {
  const [image] = await tx
    .select({ propertyId: propertyImages.propertyId, uploadFileId: propertyImages.uploadFileId })
    .from(propertyImages)
    .where(and(eq(propertyImages.id, imageId), eq(propertyImages.state, 'failed')))
  if (!image) return false
  await tx.execute(sql`select id from properties where id = ${image.propertyId} for update`)
  if (image.uploadFileId) {
    const sessionId = await sessionOfFile(tx, image.uploadFileId)
    if (sessionId) await tx.execute(sql`select 1 from upload_sessions where id = ${sessionId} for update`)
    const file = await tx
      .update(uploadFiles)
      .set({ state: 'processing', error: null, exhaustedAt: null })
      .where(and(eq(uploadFiles.id, image.uploadFileId), eq(uploadFiles.state, 'failed'), isNotNull(uploadFiles.exhaustedAt), isNull(uploadFiles.purgedAt)))
      .returning({ id: uploadFiles.id })
    if (file.length === 0) return false
    if (sessionId) await reopenSession(tx, sessionId)
  }
  // Back at the end of the order: the cover (primary) stays first (contract §9.1), and images the
  // integrator ordered meanwhile keep their places.
  await tx.execute(sql`
    update property_images set state = 'processing', error = null,
      position = coalesce((select max(position) from property_images where property_id = ${image.propertyId}), 0) + 1
    where id = ${imageId}`)
  // The role moved on when it failed; it comes back only if no other image took it.
  await assignPrimaryIfNone(tx, image.propertyId)
  return true
}

/** An operator dropped the image's exhausted job: it stays failed for good and the sweep may delete its original. */
export async function abandonImage(db: Db, imageId: string): Promise<void> {
  const [image] = await db.select({ uploadFileId: propertyImages.uploadFileId }).from(propertyImages).where(eq(propertyImages.id, imageId))
  if (image?.uploadFileId)
    await db
      .update(uploadFiles)
      .set({ exhaustedAt: null })
      .where(and(eq(uploadFiles.id, image.uploadFileId), eq(uploadFiles.state, 'failed')))
}

/** What the media sweep checks against the queues: work that should have a job by now. */
export interface StuckMediaWork {
  /** Sessions still processing with files not checked yet, completed before the cutoff. */
  sessions: string[]
  /** Images still processing, created before the cutoff. */
  images: string[]
}

export async function stuckMediaWork(db: Db, olderThanMs: number, limit: number): Promise<StuckMediaWork> {
  const cutoff = new Date(Date.now() - olderThanMs).toISOString()
  const sessions = await db.execute<{ id: string }>(sql`
    select s.id from upload_sessions s
    where s.state = 'processing' and s.completed_at < ${cutoff}
      and exists (select 1 from upload_files f where f.session_id = s.id and f.state = 'processing' and f.image_id is null)
    order by s.completed_at limit ${limit}`)
  const images = await db.execute<{ id: string }>(sql`
    select id from property_images where state = 'processing' and created_at < ${cutoff} order by created_at limit ${limit}`)
  return { sessions: sessions.map((r) => r.id), images: images.map((r) => r.id) }
}

/**
 * Sweep 1: pending sessions that expired before `expiredBefore` become `expired`. Returns the
 * originals of their files that may have been uploaded, to delete.
 */
export async function expireSessions(db: Db, expiredBefore: Date): Promise<{ fileId: string; originalKey: string }[]> {
  return db.transaction(async (tx) => {
    const expired = await tx
      .update(uploadSessions)
      .set({ state: 'expired' })
      .where(and(eq(uploadSessions.state, 'pending'), sql`${uploadSessions.expiresAt} < ${expiredBefore.toISOString()}`))
      .returning({ id: uploadSessions.id })
    if (expired.length === 0) return []
    return tx
      .select({ fileId: uploadFiles.id, originalKey: uploadFiles.originalKey })
      .from(uploadFiles)
      .where(
        and(
          inArray(
            uploadFiles.sessionId,
            expired.map((s) => s.id),
          ),
          isNull(uploadFiles.purgedAt),
        ),
      )
  })
}

/**
 * Sweep 2: originals of failed files and of expired sessions not yet deleted (a delete that failed
 * earlier is retried). A file whose job exhausted its retries keeps its original until an operator
 * retries or drops the job.
 */
export async function originalsToPurge(db: Db, limit = 500): Promise<{ fileId: string; originalKey: string }[]> {
  const rows = await db.execute<{ file_id: string; original_key: string }>(sql`
    select f.id as file_id, f.original_key from upload_files f join upload_sessions s on s.id = f.session_id
    where f.purged_at is null and ((f.state = 'failed' and f.exhausted_at is null) or s.state = 'expired')
    limit ${limit}`)
  return rows.map((r) => ({ fileId: r.file_id, originalKey: r.original_key }))
}

export async function markPurged(db: Db, fileIds: string[]): Promise<void> {
  if (fileIds.length === 0) return
  await db.update(uploadFiles).set({ purgedAt: sql`now()` }).where(inArray(uploadFiles.id, fileIds))
}

/** The business's watermark logo (`cli watermark`); null goes back to the text mark. */
export async function setWatermarkKey(db: Db, businessId: number, watermarkKey: string | null): Promise<void> {
  await db.update(businesses).set({ watermarkKey }).where(eq(businesses.id, businessId))
}

/** Expired sessions are kept a week for `GET …/uploads/{id}`, then forgotten. */
export async function deleteOldExpiredSessions(db: Db, olderThanMs = 7 * 24 * 3600 * 1000): Promise<number> {
  const cutoff = new Date(Date.now() - olderThanMs)
  const rows = await db
    .delete(uploadSessions)
    .where(and(eq(uploadSessions.state, 'expired'), sql`${uploadSessions.expiresAt} < ${cutoff.toISOString()}`))
    .returning({ id: uploadSessions.id })
  return rows.length
}

// ---- managing a property's images (contract §9.1) ----

/** An image as its property's list shows it; `position` orders the non-failed ones. */
export interface PropertyImageRow {
  id: string
  state: 'processing' | 'ready' | 'failed'
  publicUrl: string | null
  position: number
  isPrimary: boolean
  title: string
  watermarked: boolean
  width: number | null
  height: number | null
  error: string | null
}

const imageColumns = {
  id: propertyImages.id,
  state: propertyImages.state,
  publicUrl: propertyImages.publicUrl,
  position: propertyImages.position,
  isPrimary: propertyImages.isPrimary,
  title: propertyImages.title,
  watermarked: propertyImages.watermarked,
  width: propertyImages.width,
  height: propertyImages.height,
  error: propertyImages.error,
}

/** Display order (contract §9.1): non-failed images by position, then the failed ones. Uses property_images_property_idx. */
export async function listPropertyImages(db: Db, propertyId: number): Promise<PropertyImageRow[]> {
  return db
    .select(imageColumns)
    .from(propertyImages)
    .where(eq(propertyImages.propertyId, propertyId))
    .orderBy(sql`${propertyImages.state} = 'failed'`, asc(propertyImages.position), asc(propertyImages.createdAt))
}

/** An image of this property, with what its deletion needs (its objects and upload file). */
export interface ImageKeys {
  id: string
  state: PropertyImageRow['state']
  isPrimary: boolean
  title: string
  originalKey: string
  publicKey: string | null
  uploadFileId: string | null
}

export async function findPropertyImage(db: Db, propertyId: number, imageId: string): Promise<ImageKeys | null> {
  const [row] = await db
    .select({
      id: propertyImages.id,
      state: propertyImages.state,
      isPrimary: propertyImages.isPrimary,
      title: propertyImages.title,
      originalKey: propertyImages.originalKey,
      publicKey: propertyImages.publicKey,
      uploadFileId: propertyImages.uploadFileId,
    })
    .from(propertyImages)
    .where(and(eq(propertyImages.id, imageId), eq(propertyImages.propertyId, propertyId)))
  return row ?? null
}

export async function setImageTitle(db: Db, imageId: string, title: string): Promise<void> {
  await db.update(propertyImages).set({ title }).where(eq(propertyImages.id, imageId))
}

/**
 * The non-failed images of the property take positions 1..n in `ids` order (which must list each
 * of them once), the failed ones follow, and the first becomes the only primary (the cover is
 * always first, contract §9.1). Run it with the property row locked.
 */
export async function applyImageOrder(tx: Db, propertyId: number, ids: string[]): Promise<void> {
  await tx.execute(sql`
    with wanted as (select w.id::uuid as id, w.ord from jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb) with ordinality as w(id, ord)),
    failed as (
      select id, ${ids.length} + row_number() over (order by position, created_at) as ord
      from property_images where property_id = ${propertyId} and state = 'failed')
    update property_images p set position = n.ord, is_primary = (n.ord = 1 and p.state <> 'failed')
    from (select * from wanted union all select * from failed) n
    where p.id = n.id and p.property_id = ${propertyId}`)
}

/** Deletes the image row; the next non-failed image in order takes the primary role if it had it. Run it with the property row locked. */
export async function deleteImageRow(tx: Db, propertyId: number, imageId: string): Promise<void> {
  await tx.delete(propertyImages).where(and(eq(propertyImages.id, imageId), eq(propertyImages.propertyId, propertyId)))
  await assignPrimaryIfNone(tx, propertyId)
}

/** The original of a deleted image's upload file is now the storage cleanup's, not the upload sweep's. */
export async function markFilePurged(db: Db, fileId: string): Promise<void> {
  await db.update(uploadFiles).set({ purgedAt: sql`now()` }).where(eq(uploadFiles.id, fileId))
}

/** The image still exists and is `ready` with this public key (so that key must be kept). */
export async function imageHoldsPublicKey(db: Db, imageId: string, publicKey: string): Promise<boolean> {
  const [row] = await db
    .select({ id: propertyImages.id })
    .from(propertyImages)
    .where(and(eq(propertyImages.id, imageId), eq(propertyImages.publicKey, publicKey), eq(propertyImages.state, 'ready')))
  return row !== undefined
}
