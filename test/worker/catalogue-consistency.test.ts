/**
 * The public catalogue row of a property changes in the same transaction as
 * the image change that makes it stale. An upload reads `completed` only once every ready image
 * is in the property's `images[]`, and a crash (or a Redis failure) after an image became ready
 * cannot leave the catalogue without it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { makePublicCopy } from '../../shared/media/operations'
import { ImagePool } from '../../shared/media/pool'
import { createLogger } from '../../shared/platform/logger'
import { Queues, redisConnection } from '../../shared/platform/queues'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { largePng, orientedJpeg, smallWebp, uploadFiles, type UploadFileSpec } from '../helpers/images'
import { createPublished } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
let dataDir: string
let pool: ImagePool

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'catalogue-consistency-'))
  ctx = await createTestContext({ DATA_DIR: dataDir, IMAGE_THREADS: '1' })
  biz = await seedBusiness(ctx)
  pool = new ImagePool(1)
})
afterAll(async () => {
  await pool?.close()
  await ctx?.close()
  await rm(dataDir, { recursive: true, force: true })
})

const catalogueImages = async (propertyId: number): Promise<{ id: string; is_primary: boolean }[] | undefined> => {
  const [row] = await ctx.deps.database.db.execute<{ doc: any }>(sql`select doc from catalogue_entries where property_id = ${propertyId}`)
  return row?.doc.images
}

/** A processing image of the property whose original is in private storage, as upload-complete leaves it. */
async function processingImage(propertyId: number, position: number, isPrimary: boolean): Promise<string> {
  const key = `orig-${crypto.randomUUID().replace(/-/g, '')}`
  await ctx.deps.storage.put('private', key, await orientedJpeg(), 'image/jpeg')
  const [row] = await ctx.deps.database.db.execute<{ id: string }>(sql`
    insert into property_images (business_id, property_id, original_key, position, is_primary, state)
    values (${biz.id}, ${propertyId}, ${key}, ${position}, ${isPrimary}, 'processing') returning id`)
  return row.id
}

describe('the catalogue changes with the image, in one transaction', () => {
  test('an image made ready while Redis refuses every enqueue is in the catalogue at once, and stays there', async () => {
    const propertyId = await createPublished(ctx, biz.apiKey)
    const imageId = await processingImage(propertyId, 1, true)
    // A producer whose Redis is gone: before, the image committed `ready`, the reindex enqueue
    // failed, and the retry found the image ready and skipped it: the catalogue stayed stale.
    const dead = redisConnection('redis://127.0.0.1:1', 'producer', { retryStrategy: () => null, lazyConnect: true })
    dead.on('error', () => {})
    const queues = new Queues(dead, ctx.config.queuePrefix)
    const deps = { config: ctx.config, database: ctx.deps.database, storage: ctx.deps.storage, logger: ctx.deps.logger, queues, imagePool: pool }
    try {
      const first = await makePublicCopy(deps, imageId).catch((error: Error) => ({ error: error.name }))
      expect(await catalogueImages(propertyId)).toEqual([expect.objectContaining({ id: imageId, is_primary: true })])
      expect(first).toEqual({ width: 480, height: 640 })
      // The job's retry (or a second delivery of it) changes nothing.
      expect(await makePublicCopy(deps, imageId)).toEqual({ skipped: 'ready' })
      expect(await catalogueImages(propertyId)).toEqual([expect.objectContaining({ id: imageId })])
    } finally {
      await queues.close().catch(() => {})
      dead.disconnect()
    }
  })

  test('a refused image hands the primary role on in the same transaction', async () => {
    const propertyId = await createPublished(ctx, biz.apiKey)
    const first = await processingImage(propertyId, 1, true)
    const second = await processingImage(propertyId, 2, false)
    const deps = {
      config: ctx.config,
      database: ctx.deps.database,
      storage: ctx.deps.storage,
      logger: ctx.deps.logger,
      queues: ctx.deps.queues,
      imagePool: pool,
    }
    expect(await makePublicCopy(deps, second)).toEqual({ width: 480, height: 640 })
    expect(await catalogueImages(propertyId)).toEqual([expect.objectContaining({ id: second, is_primary: false })])
    // The first image's original turns out not to be an image at all.
    const [{ original_key }] = await ctx.deps.database.db.execute<{ original_key: string }>(sql`select original_key from property_images where id = ${first}`)
    await ctx.deps.storage.put('private', original_key, new TextEncoder().encode('not an image'), 'image/jpeg')
    expect(await makePublicCopy(deps, first)).toEqual({ failed: true })
    expect(await catalogueImages(propertyId)).toEqual([expect.objectContaining({ id: second, is_primary: true })])
  })
})

describe('`completed` means every ready image is in images[]', () => {
  let workers: RunningWorkers
  beforeAll(async () => {
    workers = await startWorkers(ctx.config, createLogger('silent'), ['upload-complete', 'image-watermark', 'catalogue-reindex'])
  })
  afterAll(() => workers?.close(5000))

  const KINDS = {
    jpeg: async (): Promise<UploadFileSpec> => ({ filename: 'a.jpg', content_type: 'image/jpeg', body: await orientedJpeg() }),
    png: async (): Promise<UploadFileSpec> => ({ filename: 'b.png', content_type: 'image/png', body: await largePng() }),
    webp: async (): Promise<UploadFileSpec> => ({ filename: 'c.webp', content_type: 'image/webp', body: await smallWebp() }),
    bad: async (): Promise<UploadFileSpec> => ({ filename: 'd.jpg', content_type: 'image/jpeg', body: new TextEncoder().encode('%PDF-1.4 no image') }),
    missing: async (): Promise<UploadFileSpec> => ({ filename: 'e.jpg', content_type: 'image/jpeg', size: 5000, body: null }),
  }

  test('every read of the upload that says `completed` is followed by a property whose images[] holds every ready image', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...(Object.keys(KINDS) as (keyof typeof KINDS)[])), { minLength: 1, maxLength: 5 }), async (kinds) => {
        const propertyId = await createPublished(ctx, biz.apiKey)
        const files = await Promise.all(kinds.map((k) => KINDS[k]()))
        const { uploadId } = await uploadFiles(ctx, biz.apiKey, propertyId, files)
        let reads = 0
        const violations: string[] = []
        const final = await eventually(
          async () => {
            const upload = await call(ctx.app, 'GET', `/v1/properties/${propertyId}/images/uploads/${uploadId}`, { key: biz.apiKey })
            const state = upload.body.data.state
            if (state === 'completed') {
              reads++
              const ready = upload.body.data.files.filter((f: any) => f.state === 'ready').map((f: any) => f.image_id)
              const property = await call(ctx.app, 'GET', `/v1/properties/${propertyId}`, { key: biz.apiKey })
              const listed = property.body.data.images.map((i: any) => i.id)
              const absent = ready.filter((id: string) => !listed.includes(id))
              if (absent.length) violations.push(`read ${reads}: completed, but images[] lacks ${absent.join(', ')}`)
            }
            return state === 'completed' || state === 'failed' ? upload.body.data : null
          },
          { timeoutMs: 30_000, intervalMs: 1, what: `upload of ${kinds.join(', ')}` },
        )
        expect(violations).toEqual([])
        const readyCount = kinds.filter((k) => k === 'jpeg' || k === 'png' || k === 'webp').length
        expect(final.state).toBe(readyCount > 0 ? 'completed' : 'failed')
        if (readyCount > 0) expect(reads).toBeGreaterThan(0)
      }),
      { numRuns: 8 },
    )
  }, 120_000)
})
