/**
 * Data access for a listing's videos (contract §9.3): links, ready at once, and uploads that the
 * video-transcode worker turns into public renditions. The original's key is read here only to
 * hand it to storage; it is never part of an API answer.
 */
import { and, asc, eq, inArray, isNotNull, lt, sql } from 'drizzle-orm'
import type { Db } from '../client'
import { propertyVideos, type PropertyVideoRow } from '../schema'

export type VideoState = PropertyVideoRow['state']
export type { PropertyVideoRow }

/** Appended after the property's videos. Run it with the property row locked. */
async function nextPosition(tx: Db, propertyId: number): Promise<number> {
  const [row] = await tx
    .select({ max: sql<number | null>`max(${propertyVideos.position})` })
    .from(propertyVideos)
    .where(eq(propertyVideos.propertyId, propertyId))
  return (row?.max ?? 0) + 1
}

export interface NewLinkVideo {
  businessId: number
  propertyId: number
  provider: string
  url: string
  embedUrl: string
  thumbnailUrl: string | null
  title: string
}

export async function insertLinkVideo(tx: Db, v: NewLinkVideo): Promise<string> {
  const [row] = await tx
    .insert(propertyVideos)
    .values({ ...v, source: 'link', state: 'ready', position: await nextPosition(tx, v.propertyId) })
    .returning({ id: propertyVideos.id })
  return row.id
}

export interface NewUploadVideo {
  businessId: number
  propertyId: number
  title: string
  originalKey: string
  contentType: string
  declaredSize: number
  uploadExpiresAt: Date
}

export async function insertUploadVideo(tx: Db, v: NewUploadVideo): Promise<string> {
  const [row] = await tx
    .insert(propertyVideos)
    .values({ ...v, source: 'upload', state: 'pending', position: await nextPosition(tx, v.propertyId) })
    .returning({ id: propertyVideos.id })
  return row.id
}

/** The video of this property (tenancy: the caller found the property in the business). */
export async function findVideo(db: Db, propertyId: number, videoId: string): Promise<PropertyVideoRow | null> {
  const [row] = await db
    .select()
    .from(propertyVideos)
    .where(and(eq(propertyVideos.id, videoId), eq(propertyVideos.propertyId, propertyId)))
  return row ?? null
}

/** By id alone (workers). `forUpdate` locks it for the rest of the transaction. */
export async function loadVideo(db: Db, videoId: string, options: { forUpdate?: boolean } = {}): Promise<PropertyVideoRow | null> {
  const q = db.select().from(propertyVideos).where(eq(propertyVideos.id, videoId))
  const [row] = options.forUpdate ? await q.for('update') : await q
  return row ?? null
}

/** Display order: non-failed videos by position, then the failed ones. Uses property_videos_property_idx. */
export async function listVideos(db: Db, propertyId: number): Promise<PropertyVideoRow[]> {
  return db
    .select()
    .from(propertyVideos)
    .where(eq(propertyVideos.propertyId, propertyId))
    .orderBy(sql`${propertyVideos.state} = 'failed'`, asc(propertyVideos.position), asc(propertyVideos.createdAt))
}

/** Ready videos of these properties in position order, for the catalogue. */
export async function readyVideosOf(db: Db, propertyIds: number[]): Promise<Map<number, PropertyVideoRow[]>> {
  const byProperty = new Map<number, PropertyVideoRow[]>()
  if (propertyIds.length === 0) return byProperty
  const rows = await db
    .select()
    .from(propertyVideos)
    .where(and(inArray(propertyVideos.propertyId, propertyIds), eq(propertyVideos.state, 'ready')))
    .orderBy(asc(propertyVideos.propertyId), asc(propertyVideos.position))
  for (const r of rows) {
    const list = byProperty.get(r.propertyId) ?? []
    list.push(r)
    byProperty.set(r.propertyId, list)
  }
  return byProperty
}

export async function setVideoTitle(db: Db, videoId: string, title: string): Promise<void> {
  await db.update(propertyVideos).set({ title, updatedAt: sql`now()` }).where(eq(propertyVideos.id, videoId))
}

/** Non-failed videos take positions 1..n in `ids` order, the failed ones follow. Run it with the property row locked. */
export async function applyVideoOrder(tx: Db, propertyId: number, ids: string[]): Promise<void> {
  await tx.execute(sql`
    with wanted as (select w.id::uuid as id, w.ord from jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb) with ordinality as w(id, ord)),
    failed as (
      select id, ${ids.length} + row_number() over (order by position, created_at) as ord
      from property_videos where property_id = ${propertyId} and state = 'failed')
    update property_videos v set position = n.ord, updated_at = now()
    from (select * from wanted union all select * from failed) n
    where v.id = n.id and v.property_id = ${propertyId}`)
}

export async function deleteVideoRow(tx: Db, videoId: string): Promise<void> {
  await tx.delete(propertyVideos).where(eq(propertyVideos.id, videoId))
}

/** Locks the property row for the rest of the transaction (media changes of one listing apply in turn). */
export async function lockPropertyRow(tx: Db, propertyId: number): Promise<void> {
  await tx.execute(sql`select id from properties where id = ${propertyId} for update`)
}

/** pending → processing; returns whether it moved. */
export async function startVideoProcessing(db: Db, videoId: string): Promise<boolean> {
  const rows = await db
    .update(propertyVideos)
    .set({ state: 'processing', updatedAt: sql`now()` })
    .where(and(eq(propertyVideos.id, videoId), eq(propertyVideos.state, 'pending')))
    .returning({ id: propertyVideos.id })
  return rows.length > 0
}

/** Back to pending when the transcode could not be queued (the client may complete again). */
export async function revertVideoProcessing(db: Db, videoId: string): Promise<void> {
  await db
    .update(propertyVideos)
    .set({ state: 'pending' })
    .where(and(eq(propertyVideos.id, videoId), eq(propertyVideos.state, 'processing')))
}

export interface VideoRendition {
  publicPrefix: string
  url: string
  hlsUrl: string
  thumbnailUrl: string
  durationS: number
}

/** processing → ready with its rendition; the original is no longer referenced. Returns whether it changed. */
export async function markVideoReady(tx: Db, videoId: string, r: VideoRendition): Promise<boolean> {
  const rows = await tx
    .update(propertyVideos)
    .set({ state: 'ready', error: null, ...r, originalKey: null, updatedAt: sql`now()` })
    .where(and(eq(propertyVideos.id, videoId), eq(propertyVideos.state, 'processing')))
    .returning({ id: propertyVideos.id })
  return rows.length > 0
}

/**
 * pending or processing → failed with `reason`. `keepOriginal` (its job gave up, not the file):
 * the original stays for `cli queues retry`; otherwise it is no longer referenced. Returns
 * whether it changed.
 */
export async function markVideoFailed(tx: Db, videoId: string, reason: string, options: { keepOriginal?: boolean } = {}): Promise<boolean> {
  const rows = await tx
    .update(propertyVideos)
    .set({ state: 'failed', error: reason, ...(options.keepOriginal ? {} : { originalKey: null }), updatedAt: sql`now()` })
    .where(and(eq(propertyVideos.id, videoId), inArray(propertyVideos.state, ['pending', 'processing'])))
    .returning({ id: propertyVideos.id })
  return rows.length > 0
}

/**
 * An operator retries the exhausted transcode: a failed upload whose original was kept goes back
 * to processing, at the end of the order. Returns whether it reopened.
 */
export async function reopenVideo(tx: Db, videoId: string): Promise<boolean> {
  const rows = await tx.execute<{ id: string }>(sql`
    update property_videos set state = 'processing', error = null, updated_at = now(),
      position = coalesce((select max(position) from property_videos p where p.property_id = property_videos.property_id), 0) + 1
    where id = ${videoId} and state = 'failed' and source = 'upload' and original_key is not null
    returning id`)
  return rows.length > 0
}

/** The original of a failed video is handed to the storage cleanup: returns the key it had, if any. Run it in a transaction. */
export async function releaseOriginal(tx: Db, videoId: string): Promise<string | null> {
  const video = await loadVideo(tx, videoId, { forUpdate: true })
  if (video?.state !== 'failed' || video.originalKey === null) return null
  await tx.update(propertyVideos).set({ originalKey: null }).where(eq(propertyVideos.id, videoId))
  return video.originalKey
}

/** Uploads never completed, whose URL expired before the cutoff. */
export async function expiredPendingVideos(db: Db, expiredBefore: Date, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: propertyVideos.id })
    .from(propertyVideos)
    .where(and(eq(propertyVideos.state, 'pending'), isNotNull(propertyVideos.uploadExpiresAt), lt(propertyVideos.uploadExpiresAt, expiredBefore)))
    .limit(limit)
  return rows.map((r) => r.id)
}

/** Videos processing since before the cutoff (the media sweep checks them against the queue). */
export async function processingVideosBefore(db: Db, before: Date, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: propertyVideos.id })
    .from(propertyVideos)
    .where(and(eq(propertyVideos.state, 'processing'), lt(propertyVideos.updatedAt, before)))
    .orderBy(asc(propertyVideos.updatedAt))
    .limit(limit)
  return rows.map((r) => r.id)
}
