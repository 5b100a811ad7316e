/**
 * Exhausted jobs, images: an `upload-complete` or `image-watermark` job that exhausts its retries
 * leaves its upload, files and image `failed` with a reason (never `processing` for ever), is kept
 * in the failed set with its original still in private storage, and `cli queues retry` really
 * runs it again. Real BullMQ workers; storage is broken for real (a directory where an object
 * should be, a file where the public folder should be) and repaired; small backoffs come from
 * the queues' job options.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import type { JobsOptions } from 'bullmq'
import { createApp } from '../../api/app'
import { sweepUploads } from '../../shared/media/operations'
import type { JobKind } from '../../shared/platform/jobs'
import { createLogger } from '../../shared/platform/logger'
import { Queues } from '../../shared/platform/queues'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { orientedJpeg, putUpload, smallWebp, uploadFiles } from '../helpers/images'
import { createPublished } from '../helpers/properties'

/** Three quick attempts instead of five spread over half a minute. */
const QUICK: Partial<Record<JobKind, JobsOptions>> = {
  'upload-complete': { attempts: 3, backoff: { type: 'fixed', delay: 20 } },
  'image-watermark': { attempts: 3, backoff: { type: 'fixed', delay: 20 } },
}

let base: TestContext
let ctx: TestContext
let queues: Queues
let workers: RunningWorkers
let biz: SeededBusiness
let dataDir: string
const workerLogs: string[] = []

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'exhausted-media-'))
  base = await createTestContext({ DATA_DIR: dataDir, IMAGE_THREADS: '1' })
  queues = new Queues(base.deps.redis, base.config.queuePrefix, { jobOptions: QUICK })
  ctx = { ...base, app: createApp({ ...base.deps, queues }) }
  biz = await seedBusiness(ctx)
})
afterAll(async () => {
  await workers?.close(5000)
  await queues?.close().catch(() => {})
  await base?.close()
  await rm(dataDir, { recursive: true, force: true })
})

const cli = async (...args: string[]) => {
  const proc = Bun.spawn(['bun', 'run', 'cli/index.ts', 'queues', ...args], {
    cwd: `${import.meta.dir}/../..`,
    env: { ...process.env, QUEUE_PREFIX: ctx.config.queuePrefix, DATA_DIR: dataDir },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}
const getUpload = (propertyId: number, uploadId: string) => call(ctx.app, 'GET', `/v1/properties/${propertyId}/images/uploads/${uploadId}`, { key: biz.apiKey })
const originalsOf = async (uploadId: string) => [
  ...(await ctx.deps.database.db.execute<{ original_key: string; purged_at: Date | null }>(
    sql`select original_key, purged_at from upload_files where session_id = ${uploadId} order by position`,
  )),
]
const stateIs = (propertyId: number, uploadId: string, state: string) =>
  eventually(
    async () => {
      const res = await getUpload(propertyId, uploadId)
      return res.body.data.state === state ? res.body.data : null
    },
    { timeoutMs: 15_000, what: `upload ${state}` },
  )

describe('exhausted image jobs', () => {
  test('upload-complete exhausts: the upload and its files are failed with a reason, kept, and `queues retry` completes it', async () => {
    const propertyId = await createPublished(ctx, biz.apiKey)
    const jpeg = await orientedJpeg()
    // Declared larger than a directory's size, so the broken object fails the read, not the size check.
    const { uploadId } = await uploadFiles(ctx, biz.apiKey, propertyId, [
      { filename: 'salon.jpg', content_type: 'image/jpeg', size: 1_000_000, body: jpeg },
      { filename: 'cocina.webp', content_type: 'image/webp', body: await smallWebp() },
    ])
    // Storage breaks before any worker checks the upload: every read of the first object fails.
    const [broken] = await originalsOf(uploadId)
    const brokenPath = join(dataDir, 'private', broken.original_key)
    await rm(brokenPath)
    await mkdir(brokenPath)
    workers = await startWorkers(
      ctx.config,
      createLogger('debug', {}, (l) => workerLogs.push(l)),
      ['upload-complete', 'image-watermark'],
      { jobOptions: QUICK },
    )

    const failed = await stateIs(propertyId, uploadId, 'failed')
    expect(failed.files.map((f: any) => f.state)).toEqual(['failed', 'failed'])
    for (const f of failed.files) expect(f.error).toBe('The file could not be checked (3 attempts failed); it is kept for an operator to retry')
    const job = await queues.get('upload-complete').getJob(`upload-${uploadId}`)
    expect(await job!.getState()).toBe('failed')
    expect(job!.attemptsMade).toBe(3)
    expect(workerLogs.some((l) => l.includes('"level":"error"') && l.includes('job exhausted its retries') && l.includes(`upload-${uploadId}`))).toBe(true)

    // Completing again answers the terminal state; nothing runs behind the client's back.
    const again = await call(ctx.app, 'POST', `/v1/properties/${propertyId}/images/uploads/${uploadId}/complete`, { key: biz.apiKey })
    expect(again.status).toBe(202)
    expect(again.body.state).toBe('failed')
    // Kept until an operator acts: the sweep leaves the originals of an exhausted upload alone.
    await sweepUploads(ctx.deps)
    expect((await originalsOf(uploadId)).every((o) => o.purged_at === null)).toBe(true)
    expect(await ctx.deps.storage.head('private', (await originalsOf(uploadId))[1].original_key)).not.toBeNull()

    // The operator repairs storage and retries: the job really runs again.
    await rm(brokenPath, { recursive: true })
    await ctx.deps.storage.put('private', broken.original_key, jpeg, 'image/jpeg')
    const retried = await cli('retry', '--queue', 'upload-complete', '--id', `upload-${uploadId}`, '--json')
    expect(retried.code, retried.stderr).toBe(0)
    expect(JSON.parse(retried.stdout)).toMatchObject({ retried: 1 })
    const done = await stateIs(propertyId, uploadId, 'completed')
    expect(done.files.map((f: any) => f.state)).toEqual(['ready', 'ready'])
    const property = await call(ctx.app, 'GET', `/v1/properties/${propertyId}`, { key: biz.apiKey })
    expect(property.body.data.images.map((i: any) => i.id)).toEqual(done.files.map((f: any) => f.image_id))
  }, 60_000)

  test('image-watermark exhausts: the image and its file are failed with a reason, and `queues retry --all` makes it public', async () => {
    workers ??= await startWorkers(
      ctx.config,
      createLogger('debug', {}, (l) => workerLogs.push(l)),
      ['upload-complete', 'image-watermark'],
      { jobOptions: QUICK },
    )
    const propertyId = await createPublished(ctx, biz.apiKey)
    // Public storage breaks: a file stands where the folder of public copies should be.
    const publicImages = join(dataDir, 'public', 'images')
    await rm(`${publicImages}.aside`, { recursive: true, force: true })
    await mkdir(publicImages, { recursive: true })
    await rename(publicImages, `${publicImages}.aside`)
    await writeFile(publicImages, 'not a folder')

    const { uploadId } = await uploadFiles(ctx, biz.apiKey, propertyId, [{ filename: 'salon.jpg', content_type: 'image/jpeg', body: await orientedJpeg() }])
    const failed = await stateIs(propertyId, uploadId, 'failed')
    expect(failed.files[0].state).toBe('failed')
    expect(failed.files[0].error).toMatch(/could not be processed/)
    const [image] = [
      ...(await ctx.deps.database.db.execute<{ id: string; state: string; error: string | null }>(
        sql`select id, state, error from property_images where property_id = ${propertyId}`,
      )),
    ]
    expect(image.state).toBe('failed')
    expect(image.error).toMatch(/could not be processed/)
    expect(await (await queues.get('image-watermark').getJob(`image-${image.id}`))!.getState()).toBe('failed')
    await sweepUploads(ctx.deps)
    expect((await originalsOf(uploadId))[0].purged_at).toBeNull()

    await rm(publicImages)
    await rename(`${publicImages}.aside`, publicImages)
    const retried = await cli('retry', '--queue', 'image-watermark', '--all', '--json')
    expect(retried.code, retried.stderr).toBe(0)
    expect(JSON.parse(retried.stdout).ids).toContain(`image-${image.id}`)
    const done = await stateIs(propertyId, uploadId, 'completed')
    expect(done.files[0]).toEqual({ file_id: expect.any(String), state: 'ready', image_id: image.id })
    const property = await call(ctx.app, 'GET', `/v1/properties/${propertyId}`, { key: biz.apiKey })
    expect(property.body.data.images).toEqual([expect.objectContaining({ id: image.id, is_primary: true })])
  }, 60_000)

  test('`queues drop` gives an exhausted upload up for good: its originals may then be purged', async () => {
    const propertyId = await createPublished(ctx, biz.apiKey)
    const created = await call(ctx.app, 'POST', `/v1/properties/${propertyId}/images/uploads`, {
      key: biz.apiKey,
      body: { files: [{ filename: 'salon.jpg', content_type: 'image/jpeg', size: 1_000_000 }] },
    })
    const uploadId: string = created.body.upload_id
    await (await putUpload(ctx, created.body.files[0], await orientedJpeg())).arrayBuffer()
    const [file] = await originalsOf(uploadId)
    const path = join(dataDir, 'private', file.original_key)
    await rm(path, { force: true })
    await mkdir(path)
    expect((await call(ctx.app, 'POST', `/v1/properties/${propertyId}/images/uploads/${uploadId}/complete`, { key: biz.apiKey })).status).toBe(202)
    await stateIs(propertyId, uploadId, 'failed')
    const dropped = await cli('drop', '--queue', 'upload-complete', '--id', `upload-${uploadId}`, '--json')
    expect(dropped.code, dropped.stderr).toBe(0)
    await rm(path, { recursive: true })
    await sweepUploads(ctx.deps)
    expect((await originalsOf(uploadId))[0].purged_at).not.toBeNull()
    expect((await getUpload(propertyId, uploadId)).body.data.state).toBe('failed')
  }, 60_000)
})
