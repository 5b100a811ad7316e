/**
 * Contract §9 end to end against one storage driver, with the real workers (upload-complete,
 * image-watermark, video-transcode with the real ffmpeg, storage-cleanup) running: managing
 * images (title, cover, order, delete) with read-your-writes on the public reads, imports by URL
 * from a local server, a video link, a video upload transcoded to HLS + MP4 + poster served with
 * their content types, and deleting a listing with its storage cleaned by the worker. Used by the
 * local and s3 test files.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import sharp from 'sharp'
import { createLogger } from '../../shared/platform/logger'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from './context'
import { fetchPublic, orientedJpeg, smallWebp, uploadFiles, waitForUpload } from './images'
import { createPublished } from './properties'
import { makeVideo, probe, uploadVideo, waitForVideo } from './videos'
import { relayAll } from './relay'

export const MEDIA_QUEUES = ['upload-complete', 'image-watermark', 'catalogue-reindex', 'video-transcode', 'storage-cleanup'] as const

/** The public object key behind a URL under CDN_URL. */
export const keyOf = (ctx: TestContext, url: string) => url.slice(ctx.config.cdnUrl.length + 1)

export function mediaFlowSuite(driver: 'local' | 's3', setup: () => Promise<{ env: Record<string, string>; stop(): Promise<void> }>) {
  let ctx: TestContext
  let workers: RunningWorkers
  let biz: SeededBusiness
  let other: SeededBusiness
  let dataDir: string
  let work: string
  let server: { env: Record<string, string>; stop(): Promise<void> }
  let photos: ReturnType<typeof Bun.serve>
  const workerLogs: string[] = []

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), `media-${driver}-`))
    work = await mkdtemp(join(tmpdir(), `media-${driver}-work-`))
    server = await setup()
    const jpeg = await orientedJpeg()
    const webp = await smallWebp()
    // The "other CRM" the photos are imported from.
    photos = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(req) {
        const path = new URL(req.url).pathname
        if (path === '/salon.jpg') return new Response(jpeg, { headers: { 'content-type': 'image/jpeg' } })
        if (path === '/cocina.webp') return new Response(webp, { headers: { 'content-type': 'image/webp' } })
        if (path === '/moved') return new Response(null, { status: 302, headers: { location: '/salon.jpg' } })
        return new Response('not found', { status: 404 })
      },
    })
    ctx = await createTestContext({
      DATA_DIR: dataDir,
      PUBLIC_URL: 'http://127.0.0.1:3999',
      IMAGE_THREADS: '1',
      IMAGE_IMPORT_ALLOW_HOSTS: '127.0.0.1',
      ...server.env,
    })
    expect(ctx.config.storageDriver).toBe(driver)
    workers = await startWorkers(
      ctx.config,
      createLogger('debug', {}, (line) => workerLogs.push(line)),
      [...MEDIA_QUEUES],
    )
    biz = await seedBusiness(ctx)
    other = await seedBusiness(ctx)
  })
  afterAll(async () => {
    photos?.stop(true)
    await workers?.close(5000)
    await ctx?.close()
    await server?.stop()
    await rm(dataDir, { recursive: true, force: true })
    await rm(work, { recursive: true, force: true })
  })

  const api = (method: string, path: string, body?: unknown, key = biz.apiKey) => call(ctx.app, method, path, { key, body })
  const publicImages = async (id: number) => (await api('GET', `/v1/properties/${id}`)).body.data.images
  const eventsOf = async (type: string, propertyId: number | string) => {
    await relayAll(ctx.deps)
    const rows = await ctx.deps.database.db.execute<{ data: { object: Record<string, any> } }>(
      sql`select data from events where business_id = ${biz.id} and type = ${type} order by sequence`,
    )
    return [...rows].map((r) => r.data.object).filter((o) => o.id === propertyId || o.property_id === propertyId)
  }
  const gone = (area: 'private' | 'public', key: string) =>
    eventually(async () => (await ctx.deps.storage.head(area, key)) === null, { timeoutMs: 15_000, what: `${area} ${key} deleted` })
  /** A public file's bytes and content type, saved for ffprobe. */
  const download = async (url: string, name: string) => {
    const res = await fetchPublic(ctx, url)
    expect(res.status, url).toBe(200)
    const path = join(work, name)
    const bytes = new Uint8Array(await res.arrayBuffer())
    await writeFile(path, bytes)
    return { path, bytes, contentType: res.headers.get('content-type'), res }
  }

  describe(`contract §9 (${driver} storage)`, () => {
    let propertyId: number
    let ids: string[]

    test('images: the list in display order, failed last; title, cover and order show at once in the public reads', async () => {
      propertyId = await createPublished(ctx, biz.apiKey)
      const jpeg = await orientedJpeg()
      const upload = await uploadFiles(ctx, biz.apiKey, propertyId, [
        { filename: 'a.jpg', content_type: 'image/jpeg', body: jpeg },
        // A truncated file: its header passes the checks, its pixels do not decode (the image fails).
        { filename: 'roto.jpg', content_type: 'image/jpeg', body: jpeg.slice(0, Math.floor(jpeg.byteLength / 2)) },
        { filename: 'b.webp', content_type: 'image/webp', body: await smallWebp() },
        { filename: 'c.webp', content_type: 'image/webp', body: await smallWebp() },
      ])
      const done = await waitForUpload(ctx, biz.apiKey, propertyId, upload.uploadId)
      ids = done.body.data.files.filter((f: any) => f.state === 'ready').map((f: any) => f.image_id)
      expect(ids).toHaveLength(3)

      const list = await api('GET', `/v1/properties/${propertyId}/images`)
      expect(list.status, list.text).toBe(200)
      expect(list.body.authenticated_as).toBe(biz.name)
      expect(
        list.body.data.map((i: any) => [i.id === ids[0] || i.id === ids[1] || i.id === ids[2] ? 'ready' : 'failed', i.state, i.order, i.is_primary]),
      ).toEqual([
        ['ready', 'ready', 1, true],
        ['ready', 'ready', 2, false],
        ['ready', 'ready', 3, false],
        ['failed', 'failed', 0, false],
      ])
      const failed = list.body.data[3]
      expect(failed).toMatchObject({
        url: null,
        width: null,
        height: null,
        watermarked: true,
        error: 'The image could not be decoded (corrupt or truncated file)',
      })
      expect(list.body.data[0]).toMatchObject({ id: ids[0], watermarked: true, width: 480, height: 640, title: '' })
      expect(list.body.data[0].url).toMatch(/\/images\/[0-9a-f]{32}\.jpg$/)

      expect((await api('PATCH', `/v1/properties/${propertyId}/images/${ids[1]}`, { title: 'Cocina reformada' })).body).toEqual({ status: 'ok', id: ids[1] })
      // Read-your-writes: no wait, no worker.
      expect((await publicImages(propertyId)).map((i: any) => [i.id, i.order, i.is_primary, i.title])).toEqual([
        [ids[0], 1, true, ''],
        [ids[1], 2, false, 'Cocina reformada'],
        [ids[2], 3, false, ''],
      ])
      const cover = await api('PATCH', `/v1/properties/${propertyId}/images/${ids[2]}`, { is_primary: true })
      expect(cover.status, cover.text).toBe(200)
      expect((await publicImages(propertyId)).map((i: any) => [i.id, i.order, i.is_primary])).toEqual([
        [ids[2], 1, true],
        [ids[0], 2, false],
        [ids[1], 3, false],
      ])
      const listed = await api('GET', `/v1/properties?limit=1000`)
      expect(listed.body.data.find((p: any) => p.id === propertyId).images.map((i: any) => i.id)).toEqual([ids[2], ids[0], ids[1]])

      const order = await api('PUT', `/v1/properties/${propertyId}/images/order`, { image_ids: [ids[1], ids[0], ids[2]] })
      expect(order.body).toEqual({ status: 'ok', id: propertyId })
      expect((await publicImages(propertyId)).map((i: any) => [i.id, i.order, i.is_primary, i.title])).toEqual([
        [ids[1], 1, true, 'Cocina reformada'],
        [ids[0], 2, false, ''],
        [ids[2], 3, false, ''],
      ])
      const updates = await eventsOf('property.updated', propertyId)
      expect(updates.length).toBe(3)
      expect(updates[2]).toMatchObject({ id: propertyId, published: true })
      expect(updates[2].images.map((i: any) => i.id)).toEqual([ids[1], ids[0], ids[2], failed.id])
    }, 60_000)

    test('images: refused changes are 422 / 409 / 404 and change nothing', async () => {
      const failedId = (await api('GET', `/v1/properties/${propertyId}/images`)).body.data[3].id
      const before = await publicImages(propertyId)
      const cases: [string, string, unknown, number, unknown?][] = [
        ['PATCH', `images/${ids[0]}`, { is_primary: false }, 422, ['body', 'is_primary']],
        ['PATCH', `images/${ids[0]}`, { title: 'x'.repeat(201) }, 422, ['body', 'title']],
        ['PATCH', `images/${ids[0]}`, { alt: 'x' }, 422],
        ['PATCH', `images/${failedId}`, { is_primary: true }, 409],
        ['PATCH', `images/${crypto.randomUUID()}`, { title: 'x' }, 404],
        ['PATCH', 'images/nope', { title: 'x' }, 404],
        ['PUT', 'images/order', { image_ids: [ids[0], ids[1]] }, 422, ['body', 'image_ids']],
        ['PUT', 'images/order', { image_ids: [ids[0], ids[1], ids[2], failedId] }, 422, ['body', 'image_ids', 3]],
        ['PUT', 'images/order', { image_ids: [ids[0], ids[1], ids[2], ids[0]] }, 422, ['body', 'image_ids', 3]],
        ['PUT', 'images/order', { image_ids: [ids[0], ids[1], ids[2], crypto.randomUUID()] }, 422, ['body', 'image_ids', 3]],
        ['DELETE', `images/${crypto.randomUUID()}`, undefined, 404],
      ]
      for (const [method, path, body, status, loc] of cases) {
        const res = await api(method, `/v1/properties/${propertyId}/${path}`, body)
        expect(res.status, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`).toBe(status)
        expect(res.headers.get('content-type')).toStartWith('application/problem+json')
        if (loc) expect(res.body.errors.map((e: any) => e.loc)).toContainEqual(loc)
      }
      // Another business: the property, its images and its videos are not found.
      for (const [method, path, body] of [
        ['GET', 'images'],
        ['PATCH', `images/${ids[0]}`, { title: 'x' }],
        ['PUT', 'images/order', { image_ids: ids }],
        ['DELETE', `images/${ids[0]}`],
        ['GET', 'videos'],
      ] as const) {
        const res = await api(method, `/v1/properties/${propertyId}/${path}`, body, other.apiKey)
        expect(res.status, `${method} ${path}`).toBe(404)
        expect(res.body.detail).toBe('Property not found')
      }
      expect(await publicImages(propertyId)).toEqual(before)
    })

    test('images: a deleted image leaves at once, the next becomes the cover, a worker deletes its public copy and original', async () => {
      const [cover] = await publicImages(propertyId)
      const [{ original_key }] = await ctx.deps.database.db.execute<{ original_key: string }>(
        sql`select original_key from property_images where id = ${cover.id}`,
      )
      expect(await ctx.deps.storage.head('public', keyOf(ctx, cover.url))).not.toBeNull()
      const res = await api('DELETE', `/v1/properties/${propertyId}/images/${cover.id}`)
      expect(res.body).toEqual({ status: 'ok', id: cover.id })
      expect((await publicImages(propertyId)).map((i: any) => [i.id, i.order, i.is_primary])).toEqual([
        [ids[0], 1, true],
        [ids[2], 2, false],
      ])
      expect((await api('GET', `/v1/properties/${propertyId}/images/${cover.id}`)).status).toBe(404)
      await gone('public', keyOf(ctx, cover.url))
      await gone('private', original_key)
      expect((await fetchPublic(ctx, cover.url)).status).not.toBe(200)
      await eventually(
        async () =>
          Number(
            (
              await ctx.deps.database.db.execute<{ n: number }>(
                sql`select count(*)::int as n from storage_deletions where key in (${original_key}, ${keyOf(ctx, cover.url)})`,
              )
            )[0].n,
          ) === 0,
        { what: 'deletion rows removed' },
      )
    }, 30_000)

    test('imports: each URL is fetched and processed as an upload, in order, with its title; `watermark: false` stays unmarked', async () => {
      const id = await createPublished(ctx, biz.apiKey)
      const base = `http://127.0.0.1:${photos.port}`
      const body = {
        images: [
          { url: `${base}/salon.jpg`, title: 'Salón' },
          { url: `${base}/moved`, watermark: false },
          { url: `${base}/cocina.webp` },
          { url: `${base}/missing.jpg` },
        ],
      }
      const started = await call(ctx.app, 'POST', `/v1/properties/${id}/images/imports`, {
        key: biz.apiKey,
        body,
        headers: { 'idempotency-key': `import-${id}` },
      })
      expect(started.status, started.text).toBe(202)
      expect(started.body).toEqual({ status: 'ok', upload_id: expect.any(String), state: 'processing' })
      const replay = await call(ctx.app, 'POST', `/v1/properties/${id}/images/imports`, {
        key: biz.apiKey,
        body,
        headers: { 'idempotency-key': `import-${id}` },
      })
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(replay.text).toBe(started.text)
      const done = await waitForUpload(ctx, biz.apiKey, id, started.body.upload_id)
      expect(done.body.data.state).toBe('completed')
      expect(done.body.data.files.map((f: any) => f.state)).toEqual(['ready', 'ready', 'ready', 'failed'])
      expect(done.body.data.files[3].error).toBe('http_status_404')
      const images = (await api('GET', `/v1/properties/${id}/images`)).body.data
      expect(images.map((i: any) => [i.order, i.is_primary, i.title, i.watermarked])).toEqual([
        [1, true, 'Salón', true],
        [2, false, '', false],
        [3, false, '', true],
      ])
      // The unmarked copy is the photo itself, resized; the marked one differs where the mark is.
      const plain = await sharp(new Uint8Array(await (await fetchPublic(ctx, images[1].url)).arrayBuffer()))
        .raw()
        .toBuffer({ resolveWithObject: true })
      const marked = await sharp(new Uint8Array(await (await fetchPublic(ctx, images[0].url)).arrayBuffer()))
        .raw()
        .toBuffer({ resolveWithObject: true })
      const corner = (img: typeof plain) => {
        const o = ((img.info.height - 12) * img.info.width + (img.info.width - 40)) * img.info.channels
        return [img.data[o], img.data[o + 1], img.data[o + 2]]
      }
      expect(corner(plain)).not.toEqual(corner(marked))
      expect((await publicImages(id)).map((i: any) => i.title)).toEqual(['Salón', '', ''])
    }, 60_000)

    test('video link: recognised without fetching, ready at once, public `videos[]`; any other URL is a 422 on `url`', async () => {
      const link = await api('POST', `/v1/properties/${propertyId}/videos`, { url: 'https://youtu.be/dQw4w9WgXcQ', title: 'Recorrido' })
      expect(link.status, link.text).toBe(201)
      const listed = (await api('GET', `/v1/properties/${propertyId}/videos`)).body.data
      expect(listed).toEqual([
        {
          id: link.body.id,
          source: 'link',
          state: 'ready',
          title: 'Recorrido',
          order: 1,
          url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
          embed_url: 'https://www.youtube.com/embed/dQw4w9WgXcQ',
          thumbnail_url: 'https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg',
        },
      ])
      expect((await api('GET', `/v1/properties/${propertyId}`)).body.data.videos).toEqual([
        {
          id: link.body.id,
          title: 'Recorrido',
          order: 1,
          url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
          embed_url: 'https://www.youtube.com/embed/dQw4w9WgXcQ',
          thumbnail_url: 'https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg',
        },
      ])
      const updated = (await eventsOf('property.updated', propertyId)).at(-1)!
      expect(updated).toMatchObject({ id: propertyId, published: true, videos: listed })
      for (const url of ['https://www.youtube.com/channel/x', 'https://example.com/video.mp4', 'https://vimeo.com/abc']) {
        const res = await api('POST', `/v1/properties/${propertyId}/videos`, { url })
        expect(res.status, url).toBe(422)
        expect(res.body.errors[0].loc).toEqual(['body', 'url'])
      }
      expect((await api('POST', `/v1/properties/${propertyId}/videos/${link.body.id}/complete`)).status).toBe(409)
    })

    test('video upload: HLS (≤ 6 s segments) + MP4 (H.264/AAC, ≤ 1280 px) + poster, ' +
      'no metadata, served with their content types; the original is deleted', async () => {
      const body = await makeVideo({
        seconds: 7,
        width: 1920,
        height: 1080,
        fps: 25,
        audio: true,
        metadata: { title: 'Secreto del cliente', location: '+39.4699-000.3763/', comment: 'GPS' },
      })
      const { videoId } = await uploadVideo(ctx, biz.apiKey, propertyId, { body, title: 'Salón en vídeo' })
      const [{ original_key }] = await ctx.deps.database.db.execute<{ original_key: string }>(
        sql`select original_key from property_videos where id = ${videoId}`,
      )
      const video = await waitForVideo(ctx, biz.apiKey, propertyId, videoId)
      expect(video, JSON.stringify(video)).toMatchObject({ id: videoId, source: 'upload', state: 'ready', title: 'Salón en vídeo', order: 2 })
      expect(video.duration_s).toBeGreaterThan(6.5)
      expect(video.duration_s).toBeLessThan(7.5)
      for (const field of ['url', 'hls_url', 'thumbnail_url']) expect(video[field]).toMatch(new RegExp(`^${ctx.config.cdnUrl}/videos/[0-9a-f]{32}/`))
      expect(video.embed_url).toBeUndefined()

      const playlist = await download(video.hls_url, `${driver}-playlist.m3u8`)
      expect(playlist.contentType).toBe('application/vnd.apple.mpegurl')
      const text = new TextDecoder().decode(playlist.bytes)
      expect(text).toStartWith('#EXTM3U')
      const durations = [...text.matchAll(/#EXTINF:([\d.]+)/g)].map((m) => Number(m[1]))
      const segments = text.split('\n').filter((l) => l && !l.startsWith('#'))
      expect(segments.length).toBeGreaterThanOrEqual(2)
      for (const d of durations) expect(d).toBeLessThanOrEqual(6)
      for (const [i, segment] of segments.entries()) {
        const seg = await download(new URL(segment, video.hls_url).href, `${driver}-seg${i}.ts`)
        expect(seg.contentType).toBe('video/mp2t')
      }
      const mp4 = await download(video.url, `${driver}-video.mp4`)
      expect(mp4.contentType).toBe('video/mp4')
      const info = await probe(mp4.path)
      const v = info.streams.find((s: any) => s.codec_type === 'video')
      const a = info.streams.find((s: any) => s.codec_type === 'audio')
      expect([v.codec_name, v.width, v.height]).toEqual(['h264', 1280, 720])
      expect(a.codec_name).toBe('aac')
      const tags = JSON.stringify({ format: info.format.tags ?? {}, streams: info.streams.map((s: any) => s.tags ?? {}) })
      for (const secret of ['Secreto', '39.4699', 'GPS']) expect(tags).not.toContain(secret)
      const segInfo = await probe(join(work, `${driver}-seg0.ts`))
      expect(segInfo.streams.find((s: any) => s.codec_type === 'video').codec_name).toBe('h264')
      const poster = await download(video.thumbnail_url, `${driver}-poster.jpg`)
      expect(poster.contentType).toBe('image/jpeg')
      const meta = await sharp(poster.bytes).metadata()
      expect([meta.format, meta.width, meta.height, meta.exif]).toEqual(['jpeg', 1280, 720, undefined])
      if (driver === 'local') {
        const ranged = await ctx.app.handle(new Request(`http://localhost${new URL(video.url).pathname}`, { headers: { range: 'bytes=0-99' } }))
        expect(ranged.status).toBe(206)
        expect((await ranged.arrayBuffer()).byteLength).toBe(100)
      }
      await gone('private', original_key)
      const ready = await eventsOf('video.ready', videoId)
      expect(ready.find((o) => o.id === videoId)).toMatchObject({
        id: videoId,
        property_id: propertyId,
        state: 'ready',
        hls_url: video.hls_url,
        url: video.url,
        thumbnail_url: video.thumbnail_url,
      })
      const publicVideos = (await api('GET', `/v1/properties/${propertyId}`)).body.data.videos
      expect(publicVideos.map((x: any) => [x.order, x.id])).toEqual([
        [1, publicVideos[0].id],
        [2, videoId],
      ])
      expect(publicVideos[1]).toEqual({
        id: videoId,
        title: 'Salón en vídeo',
        order: 2,
        url: video.url,
        hls_url: video.hls_url,
        thumbnail_url: video.thumbnail_url,
      })
    }, 120_000)

    test('videos: title, order and delete; a deleted upload’s rendition is removed from public storage by a worker', async () => {
      const listed = (await api('GET', `/v1/properties/${propertyId}/videos`)).body.data
      const [link, upload] = listed
      expect((await api('PATCH', `/v1/properties/${propertyId}/videos/${upload.id}`, { title: 'Nuevo título' })).body).toEqual({ status: 'ok', id: upload.id })
      expect((await api('PUT', `/v1/properties/${propertyId}/videos/order`, { video_ids: [upload.id, link.id] })).body).toEqual({
        status: 'ok',
        id: propertyId,
      })
      expect((await api('GET', `/v1/properties/${propertyId}`)).body.data.videos.map((v: any) => [v.id, v.order, v.title])).toEqual([
        [upload.id, 1, 'Nuevo título'],
        [link.id, 2, 'Recorrido'],
      ])
      expect((await api('PUT', `/v1/properties/${propertyId}/videos/order`, { video_ids: [upload.id] })).status).toBe(422)
      const prefix = keyOf(ctx, upload.hls_url).replace(/playlist\.m3u8$/, '')
      expect((await ctx.deps.storage.list('public', prefix)).length).toBeGreaterThanOrEqual(5)
      expect((await api('DELETE', `/v1/properties/${propertyId}/videos/${upload.id}`)).body).toEqual({ status: 'ok', id: upload.id })
      expect((await api('GET', `/v1/properties/${propertyId}`)).body.data.videos.map((v: any) => [v.id, v.order])).toEqual([[link.id, 1]])
      await eventually(async () => (await ctx.deps.storage.list('public', prefix)).length === 0, { timeoutMs: 15_000, what: 'rendition deleted' })
      expect((await fetchPublic(ctx, upload.hls_url)).status).not.toBe(200)
      expect((await api('DELETE', `/v1/properties/${propertyId}/videos/${upload.id}`)).status).toBe(404)
    }, 30_000)

    test('deleting a listing: 404 on every read at once; its originals, copies and renditions are deleted by a worker', async () => {
      const id = await createPublished(ctx, biz.apiKey)
      const up = await uploadFiles(ctx, biz.apiKey, id, [{ filename: 'a.webp', content_type: 'image/webp', body: await smallWebp() }])
      await waitForUpload(ctx, biz.apiKey, id, up.uploadId)
      const { videoId } = await uploadVideo(ctx, biz.apiKey, id, { body: await makeVideo({ seconds: 2, width: 320, height: 240 }) })
      const video = await waitForVideo(ctx, biz.apiKey, id, videoId)
      expect(video.state).toBe('ready')
      // A video upload never completed: its original may still arrive until its URL expires.
      const pending = await uploadVideo(ctx, biz.apiKey, id, { body: await makeVideo({ seconds: 1, width: 160, height: 120 }), complete: false })
      const [pendingVideo] = await ctx.deps.database.db.execute<{ original_key: string }>(
        sql`select original_key from property_videos where id = ${pending.videoId}`,
      )
      const image = (await publicImages(id))[0]
      const [{ original_key }] = await ctx.deps.database.db.execute<{ original_key: string }>(
        sql`select original_key from property_images where id = ${image.id}`,
      )
      const prefix = keyOf(ctx, video.hls_url).replace(/playlist\.m3u8$/, '')

      const res = await api('DELETE', `/v1/properties/${id}`)
      expect(res.body).toEqual({ status: 'ok', id })
      for (const path of [`/v1/properties/${id}`, `/v1/properties/${id}/private`, `/v1/properties/${id}/images`, `/v1/properties/${id}/videos`]) {
        const r = await api('GET', path)
        expect(r.status, path).toBe(404)
      }
      expect((await api('GET', '/v1/properties?limit=1000')).body.data.map((p: any) => p.id)).not.toContain(id)
      expect((await api('DELETE', `/v1/properties/${id}`)).status).toBe(404)
      expect(await eventsOf('property.deleted', id)).toEqual([{ id }])

      await gone('public', keyOf(ctx, image.url))
      await gone('private', original_key)
      await eventually(async () => (await ctx.deps.storage.list('public', prefix)).length === 0, { timeoutMs: 15_000, what: 'rendition deleted' })
      // The pending upload's original waits for its URL to expire: its deletion is delayed, not lost.
      const [row] = await ctx.deps.database.db.execute<{ n: number }>(
        sql`select count(*)::int as n from storage_deletions where key = ${pendingVideo.original_key}`,
      )
      expect(row.n).toBe(1)
    }, 90_000)

    test('no answer or log line names an original', async () => {
      const rows = await ctx.deps.database.db.execute<{ original_key: string }>(sql`
        select f.original_key from upload_files f join upload_sessions s on s.id = f.session_id where s.business_id = ${biz.id}
        union all select original_key from property_videos where business_id = ${biz.id} and original_key is not null`)
      expect(rows.length).toBeGreaterThan(0)
      const everything = [...ctx.logs, ...workerLogs].join('\n')
      for (const r of rows) expect(everything).not.toContain(r.original_key.split('/')[1])
    })
  })
}
