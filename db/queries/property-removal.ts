/**
 * Removing a listing (contract §9.4): what storage holds for it, read in the transaction that
 * deletes it, so every object can be handed to the storage cleanup in the same commit. The row's
 * foreign keys cascade to its images, videos, upload sessions and catalogue row.
 */
import { and, eq, sql } from 'drizzle-orm'
import type { Db } from '../client'
import { properties } from '../schema'

export interface PropertyMediaKeys {
  /** Every image's original and, once made, its public copy. */
  images: { id: string; originalKey: string; publicKey: string | null }[]
  /**
   * Originals of upload files that no image holds and the sweep has not deleted yet. `writableUntil`:
   * the upload is still pending, so its URL may still write the object until then.
   */
  files: { originalKey: string; writableUntil: Date | null }[]
  /** Each uploaded video's original (if still held) and public prefix (once transcoded). */
  videos: { originalKey: string | null; publicPrefix: string | null; writableUntil: Date | null }[]
}

export async function mediaKeysOfProperty(tx: Db, propertyId: number): Promise<PropertyMediaKeys> {
  const images = await tx.execute<{ id: string; original_key: string; public_key: string | null }>(
    sql`select id, original_key, public_key from property_images where property_id = ${propertyId}`,
  )
  const files = await tx.execute<{ original_key: string; writable_until: Date | string | null }>(sql`
    select f.original_key, case when s.state = 'pending' then s.expires_at end as writable_until
    from upload_files f join upload_sessions s on s.id = f.session_id
    where s.property_id = ${propertyId} and f.purged_at is null
      and not exists (select 1 from property_images i where i.upload_file_id = f.id)`)
  const videos = await tx.execute<{ original_key: string | null; public_prefix: string | null; writable_until: Date | string | null }>(sql`
    select original_key, public_prefix, case when state = 'pending' then upload_expires_at end as writable_until
    from property_videos where property_id = ${propertyId} and (original_key is not null or public_prefix is not null)`)
  const date = (v: Date | string | null) => (v === null ? null : new Date(v))
  return {
    images: images.map((r) => ({ id: r.id, originalKey: r.original_key, publicKey: r.public_key })),
    files: files.map((r) => ({ originalKey: r.original_key, writableUntil: date(r.writable_until) })),
    videos: videos.map((r) => ({ originalKey: r.original_key, publicPrefix: r.public_prefix, writableUntil: date(r.writable_until) })),
  }
}

/** Deletes the listing of this business; its media rows and catalogue row go with it (cascade). Returns whether it existed. */
export async function deletePropertyRow(tx: Db, businessId: number, propertyId: number): Promise<boolean> {
  const rows = await tx
    .delete(properties)
    .where(and(eq(properties.id, propertyId), eq(properties.businessId, businessId)))
    .returning({ id: properties.id })
  return rows.length > 0
}
