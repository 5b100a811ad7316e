/**
 * The exhausted-jobs rule for video-transcode (docs/operations.md "Exhausted jobs"): a transcode that keeps
 * failing for a reason that is not the file's (storage broken) leaves the video `failed` with a
 * reason and its original kept, the job in the failed set; `cli queues retry` reopens it and
 * really runs it again; `cli queues drop` hands the original to the storage cleanup.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import type { JobsOptions } from 'bullmq'
import { createApp } from '../../api/app'
import { sweepStorageDeletions } from '../../shared/media/storage-cleanup'
import type { JobKind } from '../../shared/platform/jobs'
import { createLogger } from '../../shared/platform/logger'
import { Queues } from '../../shared/platform/queues'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { ROOT } from '../helpers/processes'
import { createPublished } from '../helpers/properties'
import { makeVideo, uploadVideo, waitForVideo } from '../helpers/videos'

const QUICK: Partial<Record<JobKind, JobsOptions>> = {
  'video-transcode': { attempts: 2, backoff: { type: 'fixed', delay: 20 } },
  'storage-cleanup': { attempts: 2, backoff: { type: 'fixed', delay: 20 } },
}

let base: TestContext
let ctx: TestContext
let queues: Queues
let workers: RunningWorkers
let biz: SeededBusiness
let dataDir: string

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'video-exhausted-'))
  base = await createTestContext({ DATA_DIR: dataDir })
  queues = new Queues(base.deps.redis, base.config.queuePrefix, { jobOptions: QUICK })
  ctx = { ...base, app: createApp({ ...base.deps, queues }) }
  biz = await seedBusiness(ctx)
  workers = await startWorkers(ctx.config, createLogger('silent'), ['video-transcode', 'storage-cleanup'], { jobOptions: QUICK })
})
afterAll(async () => {
  await workers?.close(5000)
  await queues?.close().catch(() => {})
  await base?.close()
  await rm(dataDir, { recursive: true, force: true })
})

const cli = async (...args: string[]) => {
  const proc = Bun.spawn(['bun', 'run', 'cli/index.ts', 'queues', ...args], {
    cwd: ROOT,
    env: { ...process.env, QUEUE_PREFIX: ctx.config.queuePrefix, DATA_DIR: dataDir },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

/** The original of a video, broken: a directory stands where the file should be, so every read fails. */
async function breakOriginal(videoId: string): Promise<{ key: string; repair(body: Uint8Array): Promise<void> }> {
  const [{ original_key: key }] = await ctx.deps.database.db.execute<{ original_key: string }>(
    sql`select original_key from property_videos where id = ${videoId}`,
  )
  const path = join(dataDir, 'private', key)
  await rm(path, { force: true })
  await mkdir(path)
  await writeFile(join(path, 'x'), 'x')
  return {
    key,
    repair: async (body) => {
      await rm(path, { recursive: true })
      await writeFile(path, body)
    },
  }
}

describe('exhausted video-transcode', () => {
  test('failed with a reason and kept; `queues retry` transcodes it; `queues drop` lets the original go', async () => {
    const propertyId = await createPublished(ctx, biz.apiKey)
    const body = await makeVideo({ seconds: 2, width: 320, height: 240, audio: true })
    // Uploaded, then broken before it is completed (the worker picks it up at once).
    const first = await uploadVideo(ctx, biz.apiKey, propertyId, { body, complete: false })
    const broken = await breakOriginal(first.videoId)
    await ctx.app.handle(
      new Request(`http://localhost/v1/properties/${propertyId}/videos/${first.videoId}/complete`, { method: 'POST', headers: { 'x-api-key': biz.apiKey } }),
    )
    const failed = await waitForVideo(ctx, biz.apiKey, propertyId, first.videoId)
    expect(failed).toMatchObject({ state: 'failed', error: 'The video could not be processed (2 attempts failed); it is kept for an operator to retry' })
    expect(await (await queues.get('video-transcode').getJob(`video-${first.videoId}`))!.getState()).toBe('failed')
    const [kept] = await ctx.deps.database.db.execute<{ original_key: string | null }>(
      sql`select original_key from property_videos where id = ${first.videoId}`,
    )
    expect(kept.original_key).toBe(broken.key)

    await broken.repair(body)
    const retried = await cli('retry', '--queue', 'video-transcode', '--id', `video-${first.videoId}`, '--json')
    expect(retried.code, retried.stderr).toBe(0)
    const ready = await waitForVideo(ctx, biz.apiKey, propertyId, first.videoId)
    expect(ready.state).toBe('ready')
    await eventually(async () => (await ctx.deps.storage.head('private', broken.key)) === null, { what: 'the original deleted once ready' })

    // Dropped: failed for good, and the original goes to the cleanup (queued by the storage sweep).
    const second = await uploadVideo(ctx, biz.apiKey, propertyId, { body, complete: false })
    const broken2 = await breakOriginal(second.videoId)
    await ctx.app.handle(
      new Request(`http://localhost/v1/properties/${propertyId}/videos/${second.videoId}/complete`, { method: 'POST', headers: { 'x-api-key': biz.apiKey } }),
    )
    expect((await waitForVideo(ctx, biz.apiKey, propertyId, second.videoId)).state).toBe('failed')
    const dropped = await cli('drop', '--queue', 'video-transcode', '--id', `video-${second.videoId}`, '--json')
    expect(dropped.code, dropped.stderr).toBe(0)
    const [released] = await ctx.deps.database.db.execute<{ original_key: string | null }>(
      sql`select original_key from property_videos where id = ${second.videoId}`,
    )
    expect(released.original_key).toBeNull()
    await broken2.repair(body)
    // The cleanup queued by the drop may still be on its last attempt against the broken path
    // (live, so a sweep leaves it); like the maintenance task, sweeps repeat until it is done.
    await eventually(
      async () => {
        await sweepStorageDeletions({ ...ctx.deps, queues }, { olderThanMs: 0 })
        return (await ctx.deps.storage.head('private', broken2.key)) === null
      },
      { what: 'the dropped original deleted', intervalMs: 100 },
    )
  }, 90_000)
})
