/**
 * The real type of an uploaded file, from its first bytes (never from the declared content
 * type), and its dimensions when the header holds them. Pure byte parsing: no decoder runs on
 * untrusted input here, so a decompression bomb costs nothing to refuse.
 */
export type ImageType = 'jpeg' | 'png' | 'webp'

export interface Sniffed {
  type: ImageType
  /** Undefined when the dimensions lie beyond the bytes given (a JPEG with very large metadata). */
  width?: number
  height?: number
}

/** Enough for the header of any PNG/WebP and of practically every JPEG (EXIF blocks are ≤ 64 KB each). */
export const SNIFF_BYTES = 256 * 1024

export const CONTENT_TYPES: Record<ImageType, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp' }

const ascii = (b: Uint8Array, at: number, text: string) => {
  if (b.length < at + text.length) return false
  for (let i = 0; i < text.length; i++) if (b[at + i] !== text.charCodeAt(i)) return false
  return true
}
const u16be = (b: Uint8Array, at: number) => (b[at] << 8) | b[at + 1]
const u16le = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8)
const u24le = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8) | (b[at + 2] << 16)
const u32be = (b: Uint8Array, at: number) => ((b[at] << 24) >>> 0) + ((b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3])

export function sniffImage(bytes: Uint8Array): Sniffed | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { type: 'jpeg', ...jpegSize(bytes) }
  if (bytes.length >= 24 && bytes[0] === 0x89 && ascii(bytes, 1, 'PNG\r\n\x1a\n') && ascii(bytes, 12, 'IHDR')) {
    return { type: 'png', width: u32be(bytes, 16), height: u32be(bytes, 20) }
  }
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) return webp(bytes)
  return null
}

function jpegSize(b: Uint8Array): { width?: number; height?: number } {
  let i = 2
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return {} // not a marker where one must be: corrupt, the decoder will say so
    let marker = b[i + 1]
    while (marker === 0xff && i + 2 < b.length) marker = b[++i + 1] // fill bytes
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2
      continue
    }
    if (marker === 0xd9 || marker === 0xda) return {} // end of image / start of scan before any frame header
    const length = u16be(b, i + 2)
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
    if (isFrame) {
      if (i + 9 > b.length) return {}
      return { height: u16be(b, i + 5), width: u16be(b, i + 7) }
    }
    i += 2 + length
  }
  return {}
}

function webp(b: Uint8Array): Sniffed | null {
  if (ascii(b, 12, 'VP8 ') && b.length >= 30 && b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a) {
    return { type: 'webp', width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff }
  }
  if (ascii(b, 12, 'VP8L') && b.length >= 25 && b[20] === 0x2f) {
    const bits = (b[21] | (b[22] << 8) | (b[23] << 16) | (b[24] << 24)) >>> 0
    return { type: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }
  }
  if (ascii(b, 12, 'VP8X') && b.length >= 30) return { type: 'webp', width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 }
  return null
}
