/**
 * The public copy of a photo (contract §5), as one sharp pipeline: header-only dimension check
 * against the pixel limit first, then auto-orient, long edge ≤ 1920 px (never upscaled), the
 * watermark composited bottom-right, metadata (EXIF, GPS, XMP, ICC) dropped, progressive JPEG.
 * Runs inside the image worker threads (shared/media/thread.ts) and, alone, in the bench.
 */
import sharp, { type Metadata } from 'sharp'
import { watermarkOverlay, type WatermarkSpec } from './watermark'

export const MAX_EDGE = 1920
export { OUTPUT_CONTENT_TYPE, OUTPUT_EXTENSION } from './output'
const ALLOWED_FORMATS = new Set(['jpeg', 'png', 'webp'])

/** The input itself is unacceptable: retrying cannot help, the file is `failed` with this reason. */
export class ImageRejectedError extends Error {
  override name = 'ImageRejectedError'
}

export interface TransformResult {
  data: Uint8Array
  width: number
  height: number
}

/** Output size of an image of w×h (already oriented) with its long edge capped, never enlarged. */
export function fitWithin(width: number, height: number, edge = MAX_EDGE): { width: number; height: number } {
  const scale = Math.min(1, edge / Math.max(width, height))
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) }
}

export async function transformImage(input: Uint8Array, options: { maxPixels: number; watermark: WatermarkSpec | null }): Promise<TransformResult> {
  let meta: Metadata
  try {
    // Reads the header only: no pixel is decoded before the limit is checked.
    meta = await sharp(input).metadata()
  } catch {
    throw new ImageRejectedError('The file is not a readable JPEG, PNG or WebP image')
  }
  if (!meta.format || !ALLOWED_FORMATS.has(meta.format)) throw new ImageRejectedError('The file is not a JPEG, PNG or WebP image')
  const { width, height } = meta
  if (!width || !height) throw new ImageRejectedError('The image has no dimensions')
  if (width * height > options.maxPixels) {
    throw new ImageRejectedError(`The image is ${width}×${height} pixels; the limit is ${options.maxPixels} pixels`)
  }
  const swapped = (meta.orientation ?? 1) >= 5
  const out = fitWithin(swapped ? height : width, swapped ? width : height)

  // Outside the try: a broken logo is an operator problem (retried), not the photo's fault.
  const overlay = options.watermark ? await watermarkOverlay(options.watermark, out.width, out.height) : null
  try {
    let pipeline = sharp(input, { limitInputPixels: options.maxPixels, failOn: 'error', sequentialRead: true })
      .autoOrient()
      .resize({ width: out.width, height: out.height, fit: 'fill', withoutEnlargement: true })
    if (meta.hasAlpha) pipeline = pipeline.flatten({ background: '#ffffff' })
    if (overlay) pipeline = pipeline.composite([{ input: overlay.data, left: overlay.left, top: overlay.top }])
    // No withMetadata(): sharp writes no EXIF/GPS/XMP; the pixels are converted to sRGB.
    const { data, info } = await pipeline.jpeg({ quality: 82, progressive: true, chromaSubsampling: '4:2:0' }).toBuffer({ resolveWithObject: true })
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height }
  } catch (error) {
    if (error instanceof ImageRejectedError) throw error
    // The input is fixed bytes that passed the header check: a decode failure (corrupt or
    // truncated data) would fail the same way on every retry. Thread crashes are retried instead.
    throw new ImageRejectedError('The image could not be decoded (corrupt or truncated file)', { cause: error })
  }
}
