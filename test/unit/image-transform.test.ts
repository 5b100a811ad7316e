import { describe, expect, test } from 'bun:test'
import sharp from 'sharp'
import { CONTENT_TYPES, sniffImage } from '../../shared/media/sniff'
import { ImageRejectedError, fitWithin, transformImage } from '../../shared/media/transform'
import { ImagePool } from '../../shared/media/pool'
import { largePng, orientedJpeg, pngBomb, smallWebp } from '../helpers/images'

const grey = (w: number, h: number) => sharp({ create: { width: w, height: h, channels: 3, background: '#808080' } })
const pixel = async (img: Uint8Array, x: number, y: number) => {
  const { data, info } = await sharp(img).raw().toBuffer({ resolveWithObject: true })
  const o = (y * info.width + x) * info.channels
  return [data[o], data[o + 1], data[o + 2]]
}

describe('sniffImage', () => {
  test('real type and dimensions from the first bytes, whatever the declared type', async () => {
    expect(sniffImage(await orientedJpeg())).toEqual({ type: 'jpeg', width: 640, height: 480 })
    expect(sniffImage(await largePng())).toEqual({ type: 'png', width: 3000, height: 2000 })
    expect(sniffImage(await smallWebp())).toEqual({ type: 'webp', width: 200, height: 100 })
    expect(sniffImage(new Uint8Array(await grey(33, 17).webp({ lossless: true }).toBuffer()))).toEqual({ type: 'webp', width: 33, height: 17 })
    expect(sniffImage(new Uint8Array(await grey(33, 17).webp({ alphaQuality: 50 }).ensureAlpha(0.5).toBuffer()))).toMatchObject({
      type: 'webp',
      width: 33,
      height: 17,
    })
    expect(sniffImage(pngBomb(8000).subarray(0, 64))).toEqual({ type: 'png', width: 8000, height: 8000 })
    expect(CONTENT_TYPES.png).toBe('image/png')
  })

  test('anything else is not an image', async () => {
    expect(sniffImage(new TextEncoder().encode('GIF89a........'))).toBeNull()
    expect(sniffImage(new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull()
    expect(sniffImage(new Uint8Array(await grey(10, 10).gif().toBuffer()))).toBeNull()
    expect(sniffImage(new Uint8Array(await grey(10, 10).tiff().toBuffer()))).toBeNull()
    expect(sniffImage(new Uint8Array(0))).toBeNull()
  })
})

describe('transformImage', () => {
  test('fits the long edge within 1920 and never enlarges', () => {
    expect(fitWithin(4000, 3000)).toEqual({ width: 1920, height: 1440 })
    expect(fitWithin(3000, 4000)).toEqual({ width: 1440, height: 1920 })
    expect(fitWithin(800, 600)).toEqual({ width: 800, height: 600 })
  })

  test('a decompression bomb is refused from the header, before any decode', async () => {
    // The pixel limit's refusal, the size read from the header: a decode would have failed otherwise, or taken 64 MB.
    const refused = await transformImage(pngBomb(8000), { maxPixels: 50_000_000, watermark: null }).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(ImageRejectedError)
    expect((refused as Error).message).toBe('The image is 8000×8000 pixels; the limit is 50000000 pixels')
  })

  test('a corrupt body behind a valid header is refused as undecodable', async () => {
    const jpeg = await orientedJpeg()
    const truncated = jpeg.slice(0, Math.floor(jpeg.length / 3))
    await expect(transformImage(truncated, { maxPixels: 50_000_000, watermark: null })).rejects.toThrow(/could not be decoded|not a readable/)
  })

  test('the business logo is composited bottom-right; the rest is untouched', async () => {
    const logo = new Uint8Array(
      await sharp({ create: { width: 200, height: 100, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 1 } } })
        .png()
        .toBuffer(),
    )
    const out = await transformImage(new Uint8Array(await grey(1000, 800).jpeg().toBuffer()), {
      maxPixels: 50_000_000,
      watermark: { kind: 'image', cacheKey: 'logo-1', data: logo },
    })
    expect([out.width, out.height]).toEqual([1000, 800])
    const [r, g] = await pixel(out.data, 1000 - 30, 800 - 30)
    expect(r).toBeGreaterThan(200)
    expect(g).toBeLessThan(60)
    expect((await pixel(out.data, 20, 20))[0]).toBeLessThan(150)
  })

  test('without a logo, a text mark with the business name changes the corner', async () => {
    const plain = await transformImage(new Uint8Array(await grey(1000, 800).jpeg().toBuffer()), { maxPixels: 50_000_000, watermark: null })
    const marked = await transformImage(new Uint8Array(await grey(1000, 800).jpeg().toBuffer()), {
      maxPixels: 50_000_000,
      watermark: { kind: 'text', text: 'Inmobiliaria <Sol> & Mar' },
    })
    const { data: a } = await sharp(plain.data).extract({ left: 700, top: 650, width: 280, height: 130 }).raw().toBuffer({ resolveWithObject: true })
    const { data: b } = await sharp(marked.data).extract({ left: 700, top: 650, width: 280, height: 130 }).raw().toBuffer({ resolveWithObject: true })
    let diff = 0
    for (let i = 0; i < a.length; i++) diff += Math.abs(a[i] - b[i])
    expect(diff / a.length).toBeGreaterThan(1)
  })
})

describe('ImagePool', () => {
  test('runs transforms in a thread and reports refusals as such', async () => {
    const pool = new ImagePool(1)
    try {
      const out = await pool.run(await largePng(), { maxPixels: 50_000_000, watermark: { kind: 'text', text: 'Sol' } })
      expect([out.width, out.height]).toEqual([1920, 1280])
      // (caught by hand: Bun's expect().rejects does not let worker messages in while it waits)
      const refused = await pool.run(pngBomb(), { maxPixels: 50_000_000, watermark: null }).then(
        () => null,
        (error: unknown) => error,
      )
      expect(refused).toBeInstanceOf(ImageRejectedError)
      const again = await pool.run(await smallWebp(), { maxPixels: 50_000_000, watermark: null })
      expect([again.width, again.height]).toEqual([200, 100])
    } finally {
      await pool.close()
    }
  }, 30_000)
})
