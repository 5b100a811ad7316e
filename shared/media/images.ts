/**
 * Managing a listing's images after upload (contract §9.1): list, title, cover, order, delete.
 * Every change locks the property row, rebuilds its catalogue row and records `property.updated`
 * in one transaction (read-your-writes on every read); a deleted image's objects are handed to
 * the storage cleanup in that same transaction.
 */
import type { Db } from '../../db/client'
import {
  applyImageOrder,
  deleteImageRow,
  failFile,
  findPropertyImage,
  listPropertyImages,
  markFilePurged,
  sessionOfFile,
  setImageTitle,
  settleSession,
  type PropertyImageRow,
} from '../../db/queries/images'
import { AppError, fieldError, notFound } from '../platform/errors'
import type { Services } from '../platform/services'
import { lockProperty, mediaChanged, requireProperty } from './media-writes'
import type { ImageUpdate, ImageView } from './schemas'
import { queueDeletions, scheduleDeletions } from './storage-cleanup'
import { publicKeyOf } from './storage-keys'

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const ImageNotFound = () => notFound('Image')

/** The list in display order with `order` 1..n over the non-failed images, 0 for failed ones (listed last). */
export function imageViews(rows: readonly PropertyImageRow[]): ImageView[] {
  let order = 0
  return rows.map((r) => ({
    id: r.id,
    state: r.state,
    url: r.state === 'ready' ? r.publicUrl : null,
    order: r.state === 'failed' ? 0 : ++order,
    is_primary: r.state !== 'failed' && r.isPrimary,
    title: r.title,
    watermarked: r.watermarked,
    width: r.state === 'ready' ? r.width : null,
    height: r.state === 'ready' ? r.height : null,
    ...(r.state === 'failed' && r.error ? { error: r.error } : {}),
  }))
}

/** The images of a property already found in the business. */
export async function imagesOfProperty(db: Db, propertyId: number): Promise<ImageView[]> {
  return imageViews(await listPropertyImages(db, propertyId))
}

export async function listImages(deps: Pick<Services, 'database'>, businessId: number, propertyId: number): Promise<ImageView[]> {
  const { db } = deps.database
  await requireProperty(db, businessId, propertyId)
  return imagesOfProperty(db, propertyId)
}

export interface ImageRef {
  businessId: number
  propertyId: number
  imageId: string
}

async function requireImage(tx: Db, ref: ImageRef) {
  if (!UUID_RE.test(ref.imageId)) throw ImageNotFound()
  const image = await findPropertyImage(tx, ref.propertyId, ref.imageId.toLowerCase())
  if (!image) throw ImageNotFound()
  return image
}

/** Non-failed ids in their current order. */
const orderedIds = (rows: readonly PropertyImageRow[]) => rows.filter((r) => r.state !== 'failed').map((r) => r.id)

/** PATCH: a new title, and/or this image becomes the cover (order 1, the others shift down). */
export async function updateImage(deps: Pick<Services, 'database'>, ref: ImageRef, patch: ImageUpdate): Promise<{ status: 'ok'; id: string }> {
  if ((patch as { is_primary?: unknown }).is_primary === false) {
    throw fieldError(['body', 'is_primary'], 'Cannot be false: set `is_primary: true` on the image that should become the cover instead')
  }
  await deps.database.db.transaction(async (tx) => {
    const property = await lockProperty(tx, ref.businessId, ref.propertyId)
    const image = await requireImage(tx, ref)
    let changed = false
    if (patch.is_primary === true) {
      if (image.state === 'failed') throw new AppError('conflict', 'A failed image cannot be the cover')
      const current = orderedIds(await listPropertyImages(tx, property.id))
      if (current[0] !== image.id || !image.isPrimary) {
        await applyImageOrder(tx, property.id, [image.id, ...current.filter((id) => id !== image.id)])
        changed = true
      }
    }
    if (patch.title !== undefined) {
      if (image.title !== patch.title) {
        await setImageTitle(tx, image.id, patch.title)
        changed = true
      }
    }
    if (changed) await mediaChanged(tx, property, { images: await imagesOfProperty(tx, property.id) })
  })
  return { status: 'ok', id: ref.imageId.toLowerCase() }
}

/** PUT order: each non-failed image exactly once; the first becomes the cover. */
export async function reorderImages(
  deps: Pick<Services, 'database'>,
  businessId: number,
  propertyId: number,
  imageIds: string[],
): Promise<{ status: 'ok'; id: number }> {
  const wanted = imageIds.map((id) => id.toLowerCase())
  await deps.database.db.transaction(async (tx) => {
    const property = await lockProperty(tx, businessId, propertyId)
    const rows = await listPropertyImages(tx, property.id)
    checkOrder(wanted, rows, 'image_ids', 'image')
    const current = orderedIds(rows)
    const unchanged =
      current.length === wanted.length &&
      current.every((id, i) => id === wanted[i]) &&
      (wanted.length === 0 || rows.find((r) => r.id === wanted[0])?.isPrimary === true)
    if (unchanged) return
    await applyImageOrder(tx, property.id, wanted)
    await mediaChanged(tx, property, { images: await imagesOfProperty(tx, property.id) })
  })
  return { status: 'ok', id: propertyId }
}

/**
 * contract §9.1: the order must list each non-failed item exactly once. One 422 naming every
 * problem: duplicates, ids that are not (or no longer) items of the property or are failed, and
 * the ones left out.
 */
export function checkOrder(wanted: string[], rows: readonly { id: string; state: string }[], field: string, noun: string): void {
  const errors: { loc: (string | number)[]; msg: string; type: string }[] = []
  const byId = new Map(rows.map((r) => [r.id, r]))
  const seen = new Set<string>()
  wanted.forEach((id, i) => {
    const row = byId.get(id)
    if (seen.has(id)) errors.push({ loc: ['body', field, i], msg: `The ${noun} ${id} is listed twice`, type: 'duplicate' })
    else if (!row) errors.push({ loc: ['body', field, i], msg: `No ${noun} ${id} in this property`, type: 'not_found' })
    else if (row.state === 'failed')
      errors.push({ loc: ['body', field, i], msg: `The ${noun} ${id} failed; failed ${noun}s have no place in the order`, type: 'invalid' })
    seen.add(id)
  })
  const missing = rows.filter((r) => r.state !== 'failed' && !seen.has(r.id)).map((r) => r.id)
  if (missing.length)
    errors.push({ loc: ['body', field], msg: `Every ${noun} that is not failed must be listed once; missing: ${missing.join(', ')}`, type: 'missing' })
  if (errors.length) {
    throw new AppError(
      'validation',
      errors.length === 1 ? `${errors[0].loc.join('.')}: ${errors[0].msg}` : `${errors.length} problems with ${field}: ${errors.map((e) => e.msg).join('; ')}`,
      { errors },
    )
  }
}

/**
 * DELETE: the image leaves `images[]` at once (the next one in order becomes the cover), and its
 * original and public copy go to the storage cleanup in the same transaction. An image still
 * being processed is deleted too: its upload file fails ("deleted"), so the upload settles, and
 * the copy its job may still write is deleted as well (the key is known, and makePublicCopy hands
 * a copy made for a deleted image to the cleanup).
 */
export async function deleteImage(deps: Pick<Services, 'config' | 'database' | 'queues' | 'logger'>, ref: ImageRef): Promise<{ status: 'ok'; id: string }> {
  const scheduled = await deps.database.db.transaction(async (tx) => {
    const property = await lockProperty(tx, ref.businessId, ref.propertyId)
    const image = await requireImage(tx, ref)
    await deleteImageRow(tx, property.id, image.id)
    if (image.uploadFileId) {
      await failFile(tx, image.uploadFileId, 'The image was deleted')
      await markFilePurged(tx, image.uploadFileId)
      const sessionId = await sessionOfFile(tx, image.uploadFileId)
      if (sessionId) await settleSession(tx, sessionId)
    }
    const scheduled = await scheduleDeletions(tx, [
      { area: 'private', key: image.originalKey },
      { area: 'public', key: image.publicKey ?? publicKeyOf(deps.config.appSecret, image.id) },
    ])
    await mediaChanged(tx, property, { images: await imagesOfProperty(tx, property.id) })
    return scheduled
  })
  await queueDeletions(deps, scheduled)
  return { status: 'ok', id: ref.imageId.toLowerCase() }
}
