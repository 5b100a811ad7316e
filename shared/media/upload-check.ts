/**
 * The checks of one uploaded file (contract §5), from storage alone: the object exists, is no
 * larger than declared, and its first bytes say JPEG, PNG or WebP — the type it was declared as,
 * when it was declared (an import's type is only what its bytes say) — within the pixel limit.
 * Nothing is decoded here; the worker thread decodes later.
 */
import type { Services } from '../platform/services'
import { CONTENT_TYPES, SNIFF_BYTES, sniffImage } from './sniff'

export type UploadVerdict = { ok: true } | { ok: false; reason: string; deleteObject: boolean }

export async function checkUploadedFile(
  deps: Pick<Services, 'storage' | 'config'>,
  file: { originalKey: string; declaredSize: number; contentType: string },
): Promise<UploadVerdict> {
  const info = await deps.storage.head('private', file.originalKey)
  if (!info) return { ok: false, reason: 'The file was not uploaded', deleteObject: false }
  if (info.size === 0) return { ok: false, reason: 'The file is empty', deleteObject: true }
  if (info.size > file.declaredSize)
    return { ok: false, reason: `The file is larger than its declared size (${info.size} > ${file.declaredSize} bytes)`, deleteObject: true }
  const head = await deps.storage.getHead('private', file.originalKey, SNIFF_BYTES)
  if (!head) return { ok: false, reason: 'The file was not uploaded', deleteObject: false }
  const sniffed = sniffImage(head)
  if (!sniffed) return { ok: false, reason: 'The file is not a JPEG, PNG or WebP image', deleteObject: true }
  // A PNG declared as JPEG is refused rather than silently accepted (contract §5, §9).
  if (file.contentType !== '' && CONTENT_TYPES[sniffed.type] !== file.contentType.toLowerCase()) {
    return { ok: false, reason: `The file is a ${sniffed.type.toUpperCase()} image but was declared ${file.contentType}`, deleteObject: true }
  }
  if (sniffed.width !== undefined && sniffed.height !== undefined) {
    if (sniffed.width === 0 || sniffed.height === 0) return { ok: false, reason: 'The image has no pixels', deleteObject: true }
    if (sniffed.width * sniffed.height > deps.config.imageMaxPixels) {
      return {
        ok: false,
        reason: `The image is ${sniffed.width}×${sniffed.height} pixels; the limit is ${deps.config.imageMaxPixels} pixels`,
        deleteObject: true,
      }
    }
  }
  return { ok: true }
}
