/**
 * Storage deletions are retried until done (contract §9.1, §9.4): a deletion that keeps failing
 * keeps its row (attempts, last error), exhausts its job, and the maintenance sweep queues it
 * again once storage is repaired. The row's lock orders a cleanup against the transcode that
 * wants its prefix back; an image deleted while its copy is being made, or a video deleted while
 * it is being transcoded, leaves nothing in public storage. Real workers, local storage broken
 * for real (a directory where an object should be).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import type { JobsOptions } from 'bullmq'
import { createApp } from '../../api/app'
import { makePublicCopy } from '../../shared/media/operations'
import { ImagePool } from '../../shared/media/pool'
import { DeletionBusyError, processDeletion, queueDeletions, scheduleDeletions, sweepStorageDeletions } from '../../shared/media/storage-cleanup'
import type { JobKind } from '../../shared/platform/jobs'
import { createLogger } from '../../shared/platform/logger'
import { Queues } from '../../shared/platform/queues'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { smallWebp, uploadFiles, waitForUpload } from '../helpers/images'
import { createPublished } from '../helpers/properties'
import { makeVideo, uploadVideo } from '../helpers/videos'

const QUICK: Partial<Record<JobKind, JobsOptions>> = { 'storage-cleanup': { attempts: 3, backoff: { type: 'fixed', delay: 20 } } }

let base: TestContext
let ctx: TestContext
let queues: Queues
let workers: RunningWorkers
let biz: SeededBusiness
let dataDir: string

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'storage-cleanup-'))
  base = await createTestContext({ DATA_DIR: dataDir, IMAGE_THREADS: '1' })
  queues = new Queues(base.deps.redis, base.config.queuePrefix, { jobOptions: QUICK })
  ctx = { ...base, app: createApp({ ...base.deps, queues }) }
  biz = await seedBusiness(ctx)
  workers = await startWorkers(ctx.config, createLogger('silent'), ['storage-cleanup', 'upload-complete', 'video-transcode'], { jobOptions: QUICK })
})
afterAll(async () => {
  await workers?.close(5000)
  await queues?.close().catch(() => {})
  await base?.close()
  await rm(dataDir, { recursive: true, force: true })
})

const rowOf = async (id: number) =>
  (
    await ctx.deps.database.db.execute<{ attempts: number; last_error: string | null }>(
      sql`select attempts, last_error from storage_deletions where id = ${id}`,
    )
  )[0]
const hex = () => crypto.randomUUID().replace(/-/g, '')

describe('storage-cleanup', () => {
  test('a deletion that keeps failing keeps its row with the error, and is done once storage is repaired and the sweep queues it again', async () => {
    const key = `images/${hex()}.jpg`
    // Storage is broken for this key: a directory stands where the object should be.
    const path = join(dataDir, 'public', key)
    await mkdir(path, { recursive: true })
    await writeFile(join(path, 'inside'), 'x')
    const scheduled = await ctx.deps.database.db.transaction((tx) => scheduleDeletions(tx, [{ area: 'public', key }]))
    await queueDeletions({ queues, logger: ctx.deps.logger }, scheduled)
    const jobId = `deletion-${scheduled[0].id}`
    await eventually(async () => (await (await queues.get('storage-cleanup').getJob(jobId))?.getState()) === 'failed', { what: 'the job to exhaust' })
    const row = await rowOf(scheduled[0].id)
    expect(row.attempts).toBe(3)
    expect(row.last_error).toBeTruthy()

    // Repaired: the sweep replaces the exhausted job, which now deletes the object and the row.
    await rm(path, { recursive: true })
    await writeFile(path, 'the public copy')
    const swept = await sweepStorageDeletions({ ...ctx.deps, queues }, { olderThanMs: 0 })
    expect(swept.requeued).toBeGreaterThanOrEqual(1)
    await eventually(async () => (await rowOf(scheduled[0].id)) === undefined, { what: 'the row to go' })
    expect(await ctx.deps.storage.head('public', key)).toBeNull()
  })

  test('a prefix row held by another transaction is busy (retried later); once that transaction removed it, it is done', async () => {
    const prefix = `videos/${hex()}/`
    await ctx.deps.storage.put('public', `${prefix}video.mp4`, new Uint8Array(10), 'video/mp4')
    const [claim] = await ctx.deps.database.db.transaction((tx) => scheduleDeletions(tx, [{ area: 'public', key: prefix, kind: 'prefix' }]))
    // The transcode's "ready" transaction takes the claim back (deletes the row) and, while it
    // is open, a cleanup of the row must neither delete the files nor wait forever.
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    let locked!: () => void
    const rowLocked = new Promise<void>((r) => (locked = r))
    const tx = ctx.deps.database.db.transaction(async (t) => {
      await t.execute(sql`delete from storage_deletions where id = ${claim.id}`)
      locked()
      await held
    })
    // The delete has run: the row stays locked by that transaction until it ends.
    await Promise.race([rowLocked, tx])
    await expect(processDeletion(ctx.deps, claim.id)).rejects.toBeInstanceOf(DeletionBusyError)
    release()
    await tx
    expect(await processDeletion(ctx.deps, claim.id)).toEqual({ skipped: 'gone' })
    expect(await ctx.deps.storage.list('public', prefix)).toEqual([`${prefix}video.mp4`])

    // A prefix left behind (an attempt killed while uploading) is deleted as a whole.
    const [left] = await ctx.deps.database.db.transaction((t) => scheduleDeletions(t, [{ area: 'public', key: prefix, kind: 'prefix' }]))
    expect(await processDeletion(ctx.deps, left.id)).toEqual({ deleted: 1 })
    expect(await ctx.deps.storage.list('public', prefix)).toEqual([])
  })

  test('an image deleted while its public copy is being made: the copy goes to the cleanup', async () => {
    const propertyId = await createPublished(ctx, biz.apiKey)
    const up = await uploadFiles(ctx, biz.apiKey, propertyId, [{ filename: 'a.webp', content_type: 'image/webp', body: await smallWebp() }])
    // No image-watermark worker runs here: the image waits, processing.
    const [{ id: imageId }] = await eventually(
      async () => {
        const rows = [...(await ctx.deps.database.db.execute<{ id: string }>(sql`select id from property_images where property_id = ${propertyId}`))]
        return rows.length ? rows : null
      },
      { what: 'the image row' },
    )
    const pool = new ImagePool(1)
    try {
      const result = await makePublicCopy(
        {
          ...ctx.deps,
          queues,
          imagePool: {
            run: async (input, options) => {
              // The integrator deletes the image while the copy is being made.
              const res = await call(ctx.app, 'DELETE', `/v1/properties/${propertyId}/images/${imageId}`, { key: biz.apiKey })
              expect(res.status, res.text).toBe(200)
              return pool.run(input, options)
            },
          },
        },
        imageId,
      )
      expect(result).toEqual({ skipped: 'deleted' })
    } finally {
      await pool.close()
    }
    await eventually(async () => (await ctx.deps.storage.list('public', 'images/')).length === 0, { what: 'the orphan copy deleted' })
    const status = await waitForUpload(ctx, biz.apiKey, propertyId, up.uploadId)
    expect(status.body.data.files[0]).toMatchObject({ state: 'failed', error: 'The image was deleted' })
  }, 30_000)

  test('a video deleted while it is being transcoded: its rendition never stays in public storage', async () => {
    const propertyId = await createPublished(ctx, biz.apiKey)
    const { videoId } = await uploadVideo(ctx, biz.apiKey, propertyId, { body: await makeVideo({ seconds: 12, width: 1280, height: 720, audio: true }) })
    await eventually(
      async () => {
        for (const dir of (await readdir(tmpdir())).filter((n) => n.startsWith(`plm-video-${process.pid}-`))) {
          if ((await readdir(join(tmpdir(), dir, 'out')).catch(() => [] as string[])).some((n) => n.endsWith('.ts'))) return true
        }
        return false
      },
      { timeoutMs: 30_000, intervalMs: 20, what: 'the transcode under way' },
    )
    expect((await call(ctx.app, 'DELETE', `/v1/properties/${propertyId}/videos/${videoId}`, { key: biz.apiKey })).status).toBe(200)
    // The transcode finishes, finds its video gone and hands its rendition to the cleanup.
    await eventually(async () => (await readdir(tmpdir())).every((n) => !n.startsWith(`plm-video-${process.pid}-`)), {
      timeoutMs: 60_000,
      what: 'the transcode to end',
    })
    await eventually(async () => (await ctx.deps.storage.list('public', 'videos/')).length === 0, { timeoutMs: 15_000, what: 'no rendition left' })
    expect((await call(ctx.app, 'GET', `/v1/properties/${propertyId}/videos`, { key: biz.apiKey })).body.data).toEqual([])
  }, 90_000)
})
