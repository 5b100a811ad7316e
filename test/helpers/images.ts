/**
 * Image fixtures generated with sharp (tiny; nothing binary is committed) and helpers to drive an
 * upload end to end: create, PUT with the returned headers, complete, poll.
 */
import { expect } from 'bun:test'
import sharp from 'sharp'
import { deflateSync } from 'node:zlib'
import { call, eventually, type TestContext } from './context'

/** 640×480 JPEG, EXIF orientation 6 (shows as 480×640), with a copyright and GPS tag. */
export async function orientedJpeg(): Promise<Uint8Array> {
  return new Uint8Array(
    await sharp({ create: { width: 640, height: 480, channels: 3, background: '#6a8caf' } })
      .composite([{ input: { create: { width: 100, height: 100, channels: 3, background: '#ff0000' } }, left: 0, top: 0 }])
      .jpeg({ quality: 85 })
      .withMetadata({ orientation: 6 })
      .withExif({ IFD0: { Copyright: 'Fotógrafo' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '39/1 28/1 0/1' } })
      .toBuffer(),
  )
}

/** 3000×2000 PNG with alpha: must come out 1920×1280. */
export async function largePng(): Promise<Uint8Array> {
  return new Uint8Array(
    await sharp({ create: { width: 3000, height: 2000, channels: 4, background: { r: 20, g: 120, b: 60, alpha: 0.8 } } })
      .png({ compressionLevel: 9 })
      .toBuffer(),
  )
}

/** 200×100 WebP: must not be upscaled. */
export async function smallWebp(): Promise<Uint8Array> {
  return new Uint8Array(
    await sharp({ create: { width: 200, height: 100, channels: 3, background: '#c0a060' } })
      .webp()
      .toBuffer(),
  )
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
const crc32 = (b: Uint8Array) => {
  let c = 0xffffffff
  for (const x of b) c = crcTable[(c ^ x) & 255] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length)
  out.writeUInt32BE(data.length, 0)
  out.write(type, 4, 'latin1')
  Buffer.from(data).copy(out, 8)
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length)
  return out
}

/**
 * A real decompression bomb: a valid grayscale PNG of side×side pixels, all black, whose
 * compressed size is tiny (8000×8000 = 64 MP → about 60 KB; 64 MB once decoded).
 */
export function pngBomb(side = 8000): Uint8Array {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(side, 0)
  ihdr.writeUInt32BE(side, 4)
  ihdr[8] = 8 // bit depth
  ihdr[9] = 0 // grayscale
  const raw = Buffer.alloc((side + 1) * side) // filter byte 0 + zero pixels per row
  const idat = deflateSync(raw, { level: 9 })
  return new Uint8Array(
    Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', new Uint8Array(0))]),
  )
}

export interface UploadFileSpec {
  filename: string
  content_type: 'image/jpeg' | 'image/png' | 'image/webp'
  /** Declared size; defaults to the body's length. */
  size?: number
  body: Uint8Array | null
}

/** PUTs to a returned URL: through the app for the local driver (same host), over HTTP otherwise. */
export async function putUpload(ctx: TestContext, target: { url: string; headers: Record<string, string> }, body: Uint8Array): Promise<Response> {
  const url = new URL(target.url)
  if (ctx.config.storageDriver === 'local') {
    return ctx.app.handle(new Request(`http://localhost${url.pathname}${url.search}`, { method: 'PUT', headers: target.headers, body }))
  }
  return fetch(target.url, { method: 'PUT', headers: target.headers, body })
}

/** GETs a public URL (local: `/cdn/*` through the app; s3: the bucket endpoint). */
export async function fetchPublic(ctx: TestContext, url: string): Promise<Response> {
  if (ctx.config.storageDriver === 'local') {
    const u = new URL(url)
    return ctx.app.handle(new Request(`http://localhost${u.pathname}`))
  }
  return fetch(url)
}

export async function uploadFiles(
  ctx: TestContext,
  key: string,
  propertyId: number,
  files: UploadFileSpec[],
): Promise<{ uploadId: string; fileIds: string[]; putStatuses: number[]; texts: string[] }> {
  const created = await call(ctx.app, 'POST', `/v1/properties/${propertyId}/images/uploads`, {
    key,
    body: { files: files.map((f) => ({ filename: f.filename, content_type: f.content_type, size: f.size ?? f.body?.byteLength ?? 1 })) },
  })
  expect(created.status, created.text).toBe(201)
  const putStatuses: number[] = []
  for (let i = 0; i < files.length; i++) {
    const body = files[i].body
    if (!body) {
      putStatuses.push(0)
      continue
    }
    const res = await putUpload(ctx, created.body.files[i], body)
    await res.arrayBuffer()
    putStatuses.push(res.status)
  }
  const completed = await call(ctx.app, 'POST', `/v1/properties/${propertyId}/images/uploads/${created.body.upload_id}/complete`, { key })
  expect(completed.status, completed.text).toBe(202)
  expect(completed.body).toEqual({ status: 'ok', upload_id: created.body.upload_id, state: 'processing' })
  return {
    uploadId: created.body.upload_id,
    fileIds: created.body.files.map((f: { file_id: string }) => f.file_id),
    putStatuses,
    texts: [created.text, completed.text],
  }
}

export async function waitForUpload(ctx: TestContext, key: string, propertyId: number, uploadId: string, timeoutMs = 20_000) {
  let lastText = ''
  return eventually(
    async () => {
      const res = await call(ctx.app, 'GET', `/v1/properties/${propertyId}/images/uploads/${uploadId}`, { key })
      expect(res.status, res.text).toBe(200)
      lastText = res.text
      return ['completed', 'failed'].includes(res.body.data.state) ? res : null
    },
    {
      timeoutMs,
      what: `upload ${uploadId} to finish`,
      get detail() {
        return lastText
      },
    },
  )
}
