/**
 * A transcode killed half way (contract §9.3: worker `kill -9`) is redone from the
 * start by another worker and leaves no partial public files referenced — nor any at all. A real
 * worker process runs the video-transcode queue; once its ffmpeg has written segments, the whole
 * process group (worker and ffmpeg) gets SIGKILL. BullMQ's stalled check hands the job to a
 * second worker (in this process), which transcodes from the original again.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sweepVideos } from '../../shared/media/videos'
import { createLogger } from '../../shared/platform/logger'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { ROOT } from '../helpers/processes'
import { createPublished } from '../helpers/properties'
import { makeVideo, uploadVideo, waitForVideo } from '../helpers/videos'

let ctx: TestContext
let biz: SeededBusiness
let dataDir: string
let survivor: RunningWorkers | undefined
let victim: ReturnType<typeof Bun.spawn> | undefined

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'video-kill-'))
  ctx = await createTestContext({ DATA_DIR: dataDir })
  biz = await seedBusiness(ctx)
})
afterAll(async () => {
  if (victim) {
    try {
      process.kill(-victim.pid, 'SIGKILL')
    } catch {}
  }
  await survivor?.close(5000)
  await ctx?.close()
  await rm(dataDir, { recursive: true, force: true })
})

/** The work directories of a worker process's transcodes (`plm-video-<pid>-*`). */
const workDirsOf = async (pid: number) => (await readdir(tmpdir())).filter((n) => n.startsWith(`plm-video-${pid}-`)).map((n) => join(tmpdir(), n))

test('kill -9 mid-transcode: another worker redoes it from the original; only the finished rendition is in public storage', async () => {
  const propertyId = await createPublished(ctx, biz.apiKey)
  // Long enough at 1080p that ffmpeg is surely still encoding when it is killed.
  const body = await makeVideo({ seconds: 24, width: 1920, height: 1080, fps: 25, audio: true })
  const { videoId } = await uploadVideo(ctx, biz.apiKey, propertyId, { body, title: 'Recorrido' })

  // Its own session and process group, so SIGKILL reaches the worker and its ffmpeg at once.
  victim = Bun.spawn(['setsid', 'bun', 'run', 'worker/index.ts'], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'test', QUEUE_PREFIX: ctx.config.queuePrefix, DATA_DIR: dataDir, WORKER_QUEUES: 'video-transcode', LOG_LEVEL: 'silent' },
    stdout: 'ignore',
    stderr: 'ignore',
  })
  const pid = victim.pid
  // Half way: the victim's ffmpeg has written HLS segments into its work directory.
  await eventually(
    async () => {
      for (const dir of await workDirsOf(pid)) {
        const out = await readdir(join(dir, 'out')).catch(() => [] as string[])
        if (out.filter((n) => n.endsWith('.ts')).length >= 2) return true
      }
      return false
    },
    { timeoutMs: 60_000, intervalMs: 50, what: 'the first transcode to be under way' },
  )
  const list = (await call(ctx.app, 'GET', `/v1/properties/${propertyId}/videos`, { key: biz.apiKey })).body.data
  expect(list[0]).toMatchObject({ id: videoId, state: 'processing' })
  process.kill(-pid, 'SIGKILL')
  await victim.exited
  expect(victim.signalCode).toBe('SIGKILL')
  // Nothing of the killed attempt reached public storage.
  expect(await ctx.deps.storage.list('public', 'videos/')).toEqual([])

  survivor = await startWorkers(ctx.config, createLogger('silent'), ['video-transcode', 'storage-cleanup'])
  const video = await waitForVideo(ctx, biz.apiKey, propertyId, videoId, 150_000)
  expect(video, JSON.stringify(video)).toMatchObject({ state: 'ready', title: 'Recorrido' })
  expect(video.duration_s).toBeGreaterThan(23)

  // Every public file belongs to the rendition the video references, and it is complete.
  const prefix = video.hls_url.slice(ctx.config.cdnUrl.length + 1).replace(/playlist\.m3u8$/, '')
  const files = await ctx.deps.storage.list('public', 'videos/')
  expect(
    files.every((k) => k.startsWith(prefix)),
    files.join(', '),
  ).toBe(true)
  const playlist = new TextDecoder().decode((await ctx.deps.storage.get('public', `${prefix}playlist.m3u8`))!)
  const segments = playlist.split('\n').filter((l) => l.endsWith('.ts'))
  expect(playlist).toContain('#EXT-X-ENDLIST')
  for (const s of segments) expect(files).toContain(`${prefix}${s}`)
  expect(files).toContain(`${prefix}video.mp4`)
  expect(files).toContain(`${prefix}poster.jpg`)

  // The dead worker's work directory is swept (its process is gone). Any process's sweep may have
  // done it already: /tmp is shared, and only directories of live processes are kept.
  await sweepVideos(ctx.deps)
  expect(await workDirsOf(pid)).toEqual([])
  for (const dir of await workDirsOf(process.pid))
    expect(
      await stat(dir).then(
        () => true,
        () => false,
      ),
    ).toBe(true)
}, 240_000)
