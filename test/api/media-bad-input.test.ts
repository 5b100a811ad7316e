/**
 * Bad input, each a test (contract §5, §9.2, §9.3): every one ends as a `failed` file
 * or video with a reason — never a crash, a hung worker, or a stray file in public storage — and
 * the workers go on serving good work afterwards. Real workers, real ffmpeg, a real HTTP server
 * playing the other CRM (allowed by IMAGE_IMPORT_ALLOW_HOSTS=127.0.0.1, as written), local storage.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import sharp from 'sharp'
import { startImageImport } from '../../shared/media/imports'
import { processCompletedUpload } from '../../shared/media/operations'
import { createLogger } from '../../shared/platform/logger'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { orientedJpeg, smallWebp, uploadFiles, waitForUpload } from '../helpers/images'
import { MEDIA_QUEUES } from '../helpers/media-flow'
import { createPublished } from '../helpers/properties'
import { makeVideo, uploadVideo, waitForVideo } from '../helpers/videos'
import { relayAll } from '../helpers/relay'

let ctx: TestContext
let workers: RunningWorkers
let biz: SeededBusiness
let dataDir: string
let crm: ReturnType<typeof Bun.serve>
let base: string

const GiB = 1024 * 1024 * 1024

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'media-bad-'))
  const jpeg = await orientedJpeg()
  crm = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      const port = new URL(req.url).port
      switch (path) {
        case '/ok.jpg':
          return new Response(jpeg, { headers: { 'content-type': 'image/jpeg' } })
        case '/empty.jpg':
          return new Response(new Uint8Array(0), { headers: { 'content-type': 'image/jpeg' } })
        case '/to-metadata':
          return new Response(null, { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' } })
        case '/to-loopback-v6':
          return new Response(null, { status: 302, headers: { location: `http://[::1]:${port}/ok.jpg` } })
        case '/to-internal-name':
          return new Response(null, { status: 301, headers: { location: `http://photos.internal.example:${port}/ok.jpg` } })
        // Never answers: the fetch's bound ends it.
        case '/hang':
          return new Promise<Response>(() => {})
        // 1 GiB, produced as it is read and never declared: the fetch stops reading at 25 MiB.
        case '/huge': {
          let sent = 0
          const chunk = new Uint8Array(1024 * 1024)
          return new Response(
            new ReadableStream({
              pull(c) {
                if (sent >= GiB) c.close()
                else {
                  sent += chunk.byteLength
                  c.enqueue(chunk)
                }
              },
            }),
            { headers: { 'content-type': 'image/jpeg' } },
          )
        }
        default:
          return new Response('not found', { status: 404 })
      }
    },
  })
  base = `http://127.0.0.1:${crm.port}`
  ctx = await createTestContext({ DATA_DIR: dataDir, IMAGE_THREADS: '1', IMAGE_IMPORT_ALLOW_HOSTS: '127.0.0.1', IMAGE_IMPORT_TIMEOUT_MS: '1500' })
  workers = await startWorkers(ctx.config, createLogger('silent'), [...MEDIA_QUEUES])
  biz = await seedBusiness(ctx)
})
afterAll(async () => {
  crm?.stop(true)
  await workers?.close(5000)
  await ctx?.close()
  await rm(dataDir, { recursive: true, force: true })
})

const publicFiles = (prefix: 'images/' | 'videos/') => ctx.deps.storage.list('public', prefix)
const originalsOf = async (uploadId: string) =>
  [
    ...(await ctx.deps.database.db.execute<{ original_key: string }>(
      sql`select original_key from upload_files where session_id = ${uploadId} order by position`,
    )),
  ].map((r) => r.original_key)

describe('bad photos (uploads)', () => {
  test('a PNG declared as JPEG, a truncated file and a 0-byte file each fail with a reason; the good one goes on', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    const png = new Uint8Array(
      await sharp(await smallWebp())
        .png()
        .toBuffer(),
    )
    const jpeg = await orientedJpeg()
    const before = await publicFiles('images/')
    const up = await uploadFiles(ctx, biz.apiKey, id, [
      { filename: 'plano.jpg', content_type: 'image/jpeg', body: png },
      { filename: 'cortada.jpg', content_type: 'image/jpeg', body: jpeg.slice(0, Math.floor(jpeg.byteLength * 0.4)) },
      { filename: 'vacia.jpg', content_type: 'image/jpeg', size: 1, body: new Uint8Array(0) },
      { filename: 'buena.webp', content_type: 'image/webp', body: await smallWebp() },
    ])
    const done = await waitForUpload(ctx, biz.apiKey, id, up.uploadId)
    expect(done.body.data.files.map((f: any) => [f.state, f.error])).toEqual([
      ['failed', 'The file is a PNG image but was declared image/jpeg'],
      ['failed', 'The image could not be decoded (corrupt or truncated file)'],
      ['failed', 'The file is empty'],
      ['ready', undefined],
    ])
    // Exactly one new public copy: the good one's.
    const after = await publicFiles('images/')
    expect(after.filter((k) => !before.includes(k))).toHaveLength(1)
    // Refused originals are deleted from private storage.
    const keys = await originalsOf(up.uploadId)
    for (const key of keys.slice(0, 3)) expect(await ctx.deps.storage.head('private', key)).toBeNull()
  }, 30_000)
})

describe('bad imports', () => {
  // A declared Content-Length past the bound is refused before reading: test/platform/fetch.test.ts.
  test('redirects to 169.254.169.254 and to [::1], a URL that never answers, a 1 ' +
    'GiB response, an empty body: each fails with its reason; the good URL goes on', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    const before = await publicFiles('images/')
    const urls = ['/to-metadata', '/to-loopback-v6', '/hang', '/huge', '/empty.jpg', '/ok.jpg', 'http://localhost:1/ok.jpg', 'http://0.0.0.0/ok.jpg']
    const res = await call(ctx.app, 'POST', `/v1/properties/${id}/images/imports`, {
      key: biz.apiKey,
      body: { images: urls.map((u) => ({ url: u.startsWith('http') ? u : `${base}${u}` })) },
    })
    expect(res.status, res.text).toBe(202)
    const done = await waitForUpload(ctx, biz.apiKey, id, res.body.upload_id, 30_000)
    expect(done.body.data.files.map((f: any) => [f.state, f.error])).toEqual([
      ['failed', 'url_not_allowed'],
      ['failed', 'url_not_allowed'],
      // The never-answering URL: bounded by IMAGE_IMPORT_TIMEOUT_MS, not left hanging.
      ['failed', 'timeout'],
      ['failed', 'too_large'],
      ['failed', 'The file is empty'],
      ['ready', undefined],
      // Allowed hosts match as written: 127.0.0.1 being allowed does not allow `localhost` or 0.0.0.0.
      ['failed', 'url_not_allowed'],
      ['failed', 'url_not_allowed'],
    ])
    expect((await publicFiles('images/')).filter((k) => !before.includes(k))).toHaveLength(1)
    const keys = await originalsOf(res.body.upload_id)
    for (const [i, key] of keys.entries()) if (i !== 5) expect(await ctx.deps.storage.head('private', key)).toBeNull()
  }, 40_000)

  test('a redirect to a name that resolves to 10.0.0.1 fails `url_not_allowed` (the resolved address is checked, and connected to)', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    const started = await ctx.deps.database.db.transaction((tx) =>
      startImageImport(tx, { businessId: biz.id, propertyId: id, images: [{ url: `${base}/to-internal-name` }, { url: `${base}/ok.jpg` }] }),
    )
    const looked: string[] = []
    // The name server of this test answers a private address for the internal name.
    const resolveHost = async (host: string) => {
      looked.push(host)
      return host === 'photos.internal.example' ? ['10.0.0.1'] : ['127.0.0.1']
    }
    const result = await processCompletedUpload({ ...ctx.deps, resolveHost }, started.upload_id)
    expect(result).toEqual({ checked: 2, failed: 1, images: 1 })
    expect(looked).toContain('photos.internal.example')
    const status = await call(ctx.app, 'GET', `/v1/properties/${id}/images/uploads/${started.upload_id}`, { key: biz.apiKey })
    expect(status.body.data.files[0]).toMatchObject({ state: 'failed', error: 'url_not_allowed' })
  })
})

describe('bad videos', () => {
  test('random bytes declared video/mp4, a 0-byte file, 20 minutes, 8K, no video stream, ' +
    'a truncated file: each `failed` with its reason, nothing in public storage', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    const full = await makeVideo({ seconds: 6, width: 640, height: 360, audio: true, faststart: true })
    const cases: { name: string; body: Uint8Array; size?: number; contentType?: string; error: string | RegExp }[] = [
      { name: 'random bytes', body: crypto.getRandomValues(new Uint8Array(50_000)), error: 'The file is not a readable MP4, QuickTime or WebM video' },
      { name: '0 bytes', body: new Uint8Array(0), size: 1, error: 'The file is empty' },
      {
        name: '20 minutes',
        body: await makeVideo({ seconds: 1200, width: 64, height: 64, fps: 1 }),
        error: 'The video lasts 20 min 0 s; the limit is 15 minutes',
      },
      {
        name: '8K',
        body: await makeVideo({ seconds: 1, width: 7680, height: 4320, fps: 1 }),
        error: 'The video is 7680×4320 pixels; the limit is 4K (4096×2160)',
      },
      { name: 'no video stream', body: await makeVideo({ seconds: 2, width: 0, height: 0, audioOnly: true }), error: 'The file has no video stream' },
      {
        name: 'truncated',
        body: full.slice(0, Math.floor(full.byteLength * 0.5)),
        error: /^The video is truncated or corrupt \(|^The video could not be decoded/,
      },
      {
        name: 'a webm declared quicktime, 3 s',
        body: await makeVideo({ seconds: 3, width: 320, height: 240, format: 'webm' }),
        contentType: 'video/quicktime',
        error: '',
      },
    ]
    const uploaded = []
    for (const c of cases)
      uploaded.push({ ...c, ...(await uploadVideo(ctx, biz.apiKey, id, { body: c.body, size: c.size, contentType: c.contentType, complete: false })) })
    // Read before completing: a failed video no longer names its original.
    const originalKeys = [
      ...(await ctx.deps.database.db.execute<{ original_key: string }>(sql`select original_key from property_videos where property_id = ${id}`)),
    ].map((r) => r.original_key)
    expect(originalKeys.filter(Boolean)).toHaveLength(cases.length)
    for (const u of uploaded) expect((await call(ctx.app, 'POST', `/v1/properties/${id}/videos/${u.videoId}/complete`, { key: biz.apiKey })).status).toBe(202)
    for (const u of uploaded) {
      const video = await waitForVideo(ctx, biz.apiKey, id, u.videoId, 60_000)
      if (u.error === '') {
        // Any allowed container is probed for what it is: the good one after the bad ones is ready.
        expect(video.state, u.name).toBe('ready')
        continue
      }
      expect(video.state, `${u.name}: ${JSON.stringify(video)}`).toBe('failed')
      if (typeof u.error === 'string') expect(video.error, u.name).toBe(u.error)
      else expect(video.error, u.name).toMatch(u.error)
      expect(video.order).toBe(0)
    }
    // Only the good video has files in public storage, and the failed ones' originals are deleted.
    const ready = (await call(ctx.app, 'GET', `/v1/properties/${id}/videos`, { key: biz.apiKey })).body.data.filter((v: any) => v.state === 'ready')
    expect(ready).toHaveLength(1)
    const prefix = ready[0].hls_url.slice(ctx.config.cdnUrl.length + 1).replace(/playlist\.m3u8$/, '')
    await eventually(async () => (await publicFiles('videos/')).every((k) => k.startsWith(prefix)), { what: 'no stray rendition files' })
    const originals = await ctx.deps.database.db.execute<{ n: number }>(
      sql`select count(*)::int as n from property_videos where property_id = ${id} and original_key is not null`,
    )
    expect(originals[0].n).toBe(0)
    for (const key of originalKeys)
      await eventually(async () => (await ctx.deps.storage.head('private', key)) === null, { timeoutMs: 15_000, what: 'originals deleted' })
    await relayAll(ctx.deps)
    const failedEvents = await ctx.deps.database.db.execute<{ n: number }>(
      sql`select count(*)::int as n from events where business_id = ${biz.id} and type = 'video.failed'`,
    )
    expect(failedEvents[0].n).toBe(6)
  }, 180_000)

  test('an upload never made: `complete` queues it and it fails "not uploaded"; a link cannot be completed', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    const { videoId } = await uploadVideo(ctx, biz.apiKey, id, { body: null, size: 1000 })
    const video = await waitForVideo(ctx, biz.apiKey, id, videoId)
    expect(video).toMatchObject({ state: 'failed', error: 'The file was not uploaded' })
    const again = await call(ctx.app, 'POST', `/v1/properties/${id}/videos/${videoId}/complete`, { key: biz.apiKey })
    expect(again.body).toEqual({ status: 'ok', id: videoId, state: 'failed' })
  })

  test('an upload not completed before its URL expired fails on `complete` and in the sweep', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    const late = await uploadVideo(ctx, biz.apiKey, id, { body: await makeVideo({ seconds: 1, width: 160, height: 120 }), complete: false })
    const never = await uploadVideo(ctx, biz.apiKey, id, { body: null, size: 10, complete: false })
    await ctx.deps.database.db.execute(
      sql`update property_videos set upload_expires_at = now() - interval '1 hour' where id in (${late.videoId}, ${never.videoId})`,
    )
    const res = await call(ctx.app, 'POST', `/v1/properties/${id}/videos/${late.videoId}/complete`, { key: biz.apiKey })
    expect(res.body).toEqual({ status: 'ok', id: late.videoId, state: 'failed' })
    const { sweepVideos } = await import('../../shared/media/videos')
    const swept = await sweepVideos(ctx.deps)
    expect(swept.expired).toBeGreaterThanOrEqual(1)
    const list = (await call(ctx.app, 'GET', `/v1/properties/${id}/videos`, { key: biz.apiKey })).body.data
    expect(list.map((v: any) => [v.id, v.state, v.error])).toEqual([
      [late.videoId, 'failed', 'The upload was not completed in time'],
      [never.videoId, 'failed', 'The upload was not completed in time'],
    ])
  })
})
