/**
 * A business logo as the watermark stores it (`cli watermark set`): PNG, WebP or JPEG in, at most
 * MAX_LOGO_EDGE on each side, re-encoded as PNG with an alpha channel so every stored logo
 * composites the same way.
 */
import sharp, { type Metadata } from 'sharp'
import { MAX_LOGO_EDGE } from './watermark'

export type LogoRejection =
  | { kind: 'format' }
  | { kind: 'size'; width: number | undefined; height: number | undefined; maxEdge: number }
  | { kind: 'unreadable'; detail: string }

export class LogoRejectedError extends Error {
  override name = 'LogoRejectedError'
  constructor(readonly rejection: LogoRejection) {
    super(`logo rejected: ${rejection.kind}`)
  }
}

const LOGO_FORMATS = ['png', 'webp', 'jpeg']

export async function prepareLogo(input: Uint8Array): Promise<{ png: Uint8Array; width: number; height: number }> {
  let meta: Metadata
  try {
    meta = await sharp(input).metadata()
  } catch (error) {
    throw new LogoRejectedError({ kind: 'unreadable', detail: (error as Error).message })
  }
  if (!LOGO_FORMATS.includes(meta.format ?? '')) throw new LogoRejectedError({ kind: 'format' })
  const { width, height } = meta
  if (!width || !height || width > MAX_LOGO_EDGE || height > MAX_LOGO_EDGE) {
    throw new LogoRejectedError({ kind: 'size', width, height, maxEdge: MAX_LOGO_EDGE })
  }
  try {
    const png = await sharp(input).ensureAlpha().png().toBuffer()
    return { png: new Uint8Array(png), width, height }
  } catch (error) {
    throw new LogoRejectedError({ kind: 'unreadable', detail: (error as Error).message })
  }
}
