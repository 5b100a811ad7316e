/**
 * The business's watermark, sized for one output image: its own PNG/WebP logo (set with
 * `bun run cli watermark set`), or a text mark with the business name on a translucent badge.
 * The full-size mark is rendered once per business and kept (a few KB each); each image then
 * only resizes it.
 */
import sharp from 'sharp'

export type WatermarkSpec =
  | { kind: 'text'; text: string }
  /** `cacheKey` changes whenever the logo does (it is the storage key). */
  | { kind: 'image'; cacheKey: string; data: Uint8Array }

/** Width of the mark relative to the image, and its margin from the bottom-right corner. */
const WIDTH_RATIO = 0.22
const MAX_HEIGHT_RATIO = 0.15
const MARGIN_RATIO = 0.02
/** Largest logo side `cli watermark set` accepts, and the decode limit of a stored logo. */
export const MAX_LOGO_EDGE = 2000

const rendered = new Map<string, Promise<Buffer>>()
const CACHE_LIMIT = 256

const escapeMarkup = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

async function renderBase(spec: WatermarkSpec): Promise<Buffer> {
  if (spec.kind === 'image') {
    return sharp(spec.data, { limitInputPixels: MAX_LOGO_EDGE * MAX_LOGO_EDGE })
      .ensureAlpha()
      .resize({ width: MAX_LOGO_EDGE / 2, height: MAX_LOGO_EDGE / 2, fit: 'inside', withoutEnlargement: true })
      .png()
      .toBuffer()
  }
  const text = escapeMarkup(spec.text.trim() || ' ').slice(0, 200)
  const label = await sharp({ text: { text: `<span foreground="#ffffff" fgalpha="85%">${text}</span>`, font: 'sans bold 64', rgba: true, dpi: 72 } })
    .png()
    .toBuffer()
  const meta = await sharp(label).metadata()
  const pad = Math.round((meta.height ?? 64) * 0.35)
  return sharp(label)
    .extend({ top: pad, bottom: pad, left: pad * 2, right: pad * 2, background: { r: 0, g: 0, b: 0, alpha: 0.35 } })
    .png()
    .toBuffer()
}

function base(spec: WatermarkSpec): Promise<Buffer> {
  const key = spec.kind === 'image' ? `image:${spec.cacheKey}` : `text:${spec.text}`
  let entry = rendered.get(key)
  if (!entry) {
    if (rendered.size >= CACHE_LIMIT) {
      const oldest = rendered.keys().next()
      if (!oldest.done) rendered.delete(oldest.value)
    }
    entry = renderBase(spec)
    entry.catch(() => rendered.delete(key))
    rendered.set(key, entry)
  }
  return entry
}

/** The mark resized for an image of width×height and where to put it; null when the image is too small to carry one. */
export async function watermarkOverlay(spec: WatermarkSpec, width: number, height: number): Promise<{ data: Buffer; left: number; top: number } | null> {
  const boxWidth = Math.floor(width * WIDTH_RATIO)
  const boxHeight = Math.floor(height * MAX_HEIGHT_RATIO)
  if (boxWidth < 8 || boxHeight < 4) return null
  const { data, info } = await sharp(await base(spec))
    .resize({ width: boxWidth, height: boxHeight, fit: 'inside' })
    .png()
    .toBuffer({ resolveWithObject: true })
  const margin = Math.round(Math.min(width, height) * MARGIN_RATIO)
  return { data, left: Math.max(0, width - info.width - margin), top: Math.max(0, height - info.height - margin) }
}
