/**
 * The whole image flow against one storage driver, with the real workers running: upload,
 * complete, poll, public copies fetched and checked, bad files failed while the worker stays
 * up, ordering and primary, tenancy and expiry, the sweep. Used by the local and s3 test files.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import sharp from 'sharp'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { createLogger } from '../../shared/platform/logger'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { sweepUploads } from '../../shared/media/operations'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from './context'
import { fetchPublic, largePng, orientedJpeg, pngBomb, putUpload, smallWebp, uploadFiles, waitForUpload } from './images'
import { createProperty } from './properties'

export function imageFlowSuite(driver: 'local' | 's3', setup: () => Promise<{ env: Record<string, string>; stop(): Promise<void> }>) {
  let ctx: TestContext
  let workers: RunningWorkers
  let biz: SeededBusiness
  let other: SeededBusiness
  let dataDir: string
  let server: { env: Record<string, string>; stop(): Promise<void> }
  const workerLogs: string[] = []
  const texts: string[] = []

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), `images-${driver}-`))
    server = await setup()
    ctx = await createTestContext({ DATA_DIR: dataDir, PUBLIC_URL: 'http://127.0.0.1:3999', IMAGE_THREADS: '1', ...server.env })
    expect(ctx.config.storageDriver).toBe(driver)
    workers = await startWorkers(
      ctx.config,
      createLogger('debug', {}, (line) => workerLogs.push(line)),
      ['upload-complete', 'image-watermark', 'catalogue-reindex'],
    )
    biz = await seedBusiness(ctx)
    other = await seedBusiness(ctx)
  })
  afterAll(async () => {
    await workers?.close(5000)
    await ctx?.close()
    await server?.stop()
    await rm(dataDir, { recursive: true, force: true })
  })

  const get = (path: string, key = biz.apiKey) =>
    call(ctx.app, 'GET', path, { key }).then((r) => {
      texts.push(r.text)
      return r
    })

  describe(`image flow (${driver} storage)`, () => {
    let propertyId: number
    let firstUpload: { uploadId: string; fileIds: string[]; putStatuses: number[]; texts: string[] }

    test('good files become public copies in upload order; bad ones fail with a reason', async () => {
      propertyId = await createProperty(ctx, biz.apiKey)
      const jpeg = await orientedJpeg()
      expect((await sharp(jpeg).metadata()).exif).toBeDefined()
      const notImage = new TextEncoder().encode('%PDF-1.4 this is not an image at all')
      const tooLarge = await smallWebp()
      firstUpload = await uploadFiles(ctx, biz.apiKey, propertyId, [
        { filename: 'salon.jpg', content_type: 'image/jpeg', body: jpeg },
        { filename: 'fachada.png', content_type: 'image/png', body: await largePng() },
        { filename: 'documento.jpg', content_type: 'image/jpeg', body: notImage },
        { filename: 'grande.webp', content_type: 'image/webp', size: 100, body: tooLarge },
        { filename: 'bomba.png', content_type: 'image/png', body: pngBomb() },
        { filename: 'nunca.jpg', content_type: 'image/jpeg', size: 5000, body: null },
        { filename: 'cocina.webp', content_type: 'image/webp', body: await smallWebp() },
      ])
      // The create answer holds the write-only upload URLs (which necessarily address the
      // original); every other answer and every log line must not name an original.
      texts.push(firstUpload.texts[1])
      // local refuses the oversized body at the PUT; S3 cannot bound a presigned PUT, the worker does.
      expect(firstUpload.putStatuses).toEqual([200, 200, 200, driver === 'local' ? 413 : 200, 200, 0, 200])

      const done = await waitForUpload(ctx, biz.apiKey, propertyId, firstUpload.uploadId)
      texts.push(done.text)
      const files = done.body.data.files
      expect(done.body.data.state).toBe('completed')
      expect(done.body.authenticated_as).toBe(biz.name)
      expect(files.map((f: any) => f.state)).toEqual(['ready', 'ready', 'failed', 'failed', 'failed', 'failed', 'ready'])
      expect(files.map((f: any) => f.file_id)).toEqual(firstUpload.fileIds)
      expect(files[2].error).toBe('The file is not a JPEG, PNG or WebP image')
      expect(files[3].error).toMatch(driver === 'local' ? /not uploaded/ : /larger than its declared size/)
      expect(files[4].error).toBe('The image is 8000×8000 pixels; the limit is 50000000 pixels')
      expect(files[5].error).toBe('The file was not uploaded')
      for (const f of files) {
        if (f.state === 'ready') expect(Object.keys(f).sort()).toEqual(['file_id', 'image_id', 'state'])
        else expect(Object.keys(f).sort()).toEqual(['error', 'file_id', 'state'])
      }

      // Refused originals are deleted at once.
      const originals = await ctx.deps.database.db.execute<{ original_key: string; state: string }>(
        sql`select original_key, state from upload_files where session_id = ${firstUpload.uploadId} order by position`,
      )
      for (const o of originals) {
        const exists = (await ctx.deps.storage.head('private', o.original_key)) !== null
        expect(exists).toBe(o.state === 'ready')
      }

      // Published: images[] shows the ready ones, in upload order, the first primary.
      expect((await call(ctx.app, 'POST', `/v1/properties/${propertyId}/publish`, { key: biz.apiKey })).status).toBe(200)
      const prop = await get(`/v1/properties/${propertyId}`)
      const images = prop.body.data.images
      expect(images.map((i: any) => i.id)).toEqual([files[0].image_id, files[1].image_id, files[6].image_id])
      expect(images.map((i: any) => [i.order, i.is_primary, i.title])).toEqual([
        [1, true, ''],
        [2, false, ''],
        [3, false, ''],
      ])

      const expected = [
        [480, 640],
        [1920, 1280],
        [200, 100],
      ]
      for (let i = 0; i < images.length; i++) {
        expect(images[i].url.startsWith(`${ctx.config.cdnUrl}/images/`)).toBe(true)
        expect(images[i].url).toMatch(/\/images\/[0-9a-f]{32}\.jpg$/)
        const res = await fetchPublic(ctx, images[i].url)
        expect(res.status).toBe(200)
        if (driver === 'local') expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
        const body = new Uint8Array(await res.arrayBuffer())
        const meta = await sharp(body).metadata()
        expect(meta.format).toBe('jpeg')
        expect([meta.width, meta.height]).toEqual(expected[i])
        expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(1920)
        expect(meta.exif).toBeUndefined()
        expect(meta.xmp).toBeUndefined()
        expect(meta.orientation ?? 1).toBe(1)
      }
      // Auto-oriented: the red corner drawn top-left of the stored (unrotated) photo is now top-right.
      const first = await sharp(new Uint8Array(await (await fetchPublic(ctx, images[0].url)).arrayBuffer()))
        .raw()
        .toBuffer({ resolveWithObject: true })
      const px = (x: number, y: number) => {
        const o = (y * first.info.width + x) * first.info.channels
        return [first.data[o], first.data[o + 1], first.data[o + 2]]
      }
      expect(px(first.info.width - 10, 10)[0]).toBeGreaterThan(200)
      expect(px(10, 10)[0]).toBeLessThan(150)
    }, 60_000)

    test('the worker stays up: the next upload works and is appended after the existing images', async () => {
      const next = await uploadFiles(ctx, biz.apiKey, propertyId, [{ filename: 'terraza.jpg', content_type: 'image/jpeg', body: await orientedJpeg() }])
      const done = await waitForUpload(ctx, biz.apiKey, propertyId, next.uploadId)
      expect(done.body.data.state).toBe('completed')
      const imageId = done.body.data.files[0].image_id
      const images = await eventually(
        async () => {
          const res = await get(`/v1/properties/${propertyId}`)
          return res.body.data.images.length === 4 ? res.body.data.images : null
        },
        { what: 'the reindex of the fourth image' },
      )
      expect(images[3]).toMatchObject({ id: imageId, order: 4, is_primary: false })
      expect(images.filter((i: any) => i.is_primary)).toHaveLength(1)
    }, 30_000)

    test('an upload whose files all fail is `failed`; the first image of a draft without one becomes primary', async () => {
      const draft = await createProperty(ctx, biz.apiKey)
      const bad = await uploadFiles(ctx, biz.apiKey, draft, [{ filename: 'x.jpg', content_type: 'image/jpeg', body: new Uint8Array([1, 2, 3]) }])
      expect((await waitForUpload(ctx, biz.apiKey, draft, bad.uploadId)).body.data.state).toBe('failed')
      const good = await uploadFiles(ctx, biz.apiKey, draft, [
        { filename: 'a.webp', content_type: 'image/webp', body: await smallWebp() },
        { filename: 'b.webp', content_type: 'image/webp', body: await smallWebp() },
      ])
      expect((await waitForUpload(ctx, biz.apiKey, draft, good.uploadId)).body.data.state).toBe('completed')
      expect((await call(ctx.app, 'POST', `/v1/properties/${draft}/publish`, { key: biz.apiKey })).status).toBe(200)
      const images = (await get(`/v1/properties/${draft}`)).body.data.images
      expect(images.map((i: any) => [i.order, i.is_primary])).toEqual([
        [1, true],
        [2, false],
      ])
    }, 30_000)

    test('tenancy: another business gets 404 for the property and the upload', async () => {
      const base = `/v1/properties/${propertyId}/images/uploads`
      const body = { files: [{ filename: 'a.jpg', content_type: 'image/jpeg', size: 10 }] }
      const create = await call(ctx.app, 'POST', base, { key: other.apiKey, body })
      expect(create.status).toBe(404)
      expect(create.body.detail).toBe('Property not found')
      expect(create.headers.get('content-type')).toContain('application/problem+json')
      for (const [method, path] of [
        ['GET', `${base}/${firstUpload.uploadId}`],
        ['POST', `${base}/${firstUpload.uploadId}/complete`],
      ] as const) {
        const res = await call(ctx.app, method, path, { key: other.apiKey })
        expect(res.status, res.text).toBe(404)
        expect(res.body.detail).toBe('Upload not found')
      }
      // The right business, but another of its properties.
      const otherProperty = await createProperty(ctx, biz.apiKey)
      expect((await call(ctx.app, 'GET', `/v1/properties/${otherProperty}/images/uploads/${firstUpload.uploadId}`, { key: biz.apiKey })).status).toBe(404)
    })

    test('unknown and malformed upload ids are 404; a bad property id is 422', async () => {
      for (const id of [crypto.randomUUID(), 'nope', '123', "x' or 1=1"]) {
        const path = `/v1/properties/${propertyId}/images/uploads/${encodeURIComponent(id)}`
        expect((await call(ctx.app, 'GET', path, { key: biz.apiKey })).status).toBe(404)
        expect((await call(ctx.app, 'POST', `${path}/complete`, { key: biz.apiKey })).status).toBe(404)
      }
      for (const id of ['0', 'abc', '-1']) {
        expect(
          (
            await call(ctx.app, 'POST', `/v1/properties/${id}/images/uploads`, {
              key: biz.apiKey,
              body: { files: [{ filename: 'a.jpg', content_type: 'image/jpeg', size: 1 }] },
            })
          ).status,
        ).toBe(422)
      }
    })

    test('an expired upload: complete is 404, its state is `expired`, the sweep deletes its objects', async () => {
      const created = await call(ctx.app, 'POST', `/v1/properties/${propertyId}/images/uploads`, {
        key: biz.apiKey,
        body: { files: [{ filename: 'a.webp', content_type: 'image/webp', size: 5000 }] },
      })
      expect(created.status).toBe(201)
      const put = await putUpload(ctx, created.body.files[0], await smallWebp())
      expect(put.status).toBe(200)
      const [{ original_key }] = await ctx.deps.database.db.execute<{ original_key: string }>(
        sql`select original_key from upload_files where session_id = ${created.body.upload_id}`,
      )
      expect(await ctx.deps.storage.head('private', original_key)).not.toBeNull()
      await ctx.deps.database.db.execute(sql`update upload_sessions set expires_at = now() - interval '1 hour' where id = ${created.body.upload_id}`)
      const path = `/v1/properties/${propertyId}/images/uploads/${created.body.upload_id}`
      expect((await call(ctx.app, 'POST', `${path}/complete`, { key: biz.apiKey })).status).toBe(404)
      expect((await get(path)).body.data.state).toBe('expired')
      const swept = await sweepUploads({ database: ctx.deps.database, storage: ctx.deps.storage })
      expect(swept.expired).toBeGreaterThanOrEqual(1)
      expect(await ctx.deps.storage.head('private', original_key)).toBeNull()
      const [{ state }] = await ctx.deps.database.db.execute<{ state: string }>(sql`select state from upload_sessions where id = ${created.body.upload_id}`)
      expect(state).toBe('expired')
    })

    test('no answer or log line names an original', async () => {
      const rows = await ctx.deps.database.db.execute<{ original_key: string }>(
        sql`select f.original_key from upload_files f join upload_sessions s on s.id = f.session_id where s.business_id = ${biz.id}`,
      )
      expect(rows.length).toBeGreaterThan(0)
      const everything = [...texts, ...ctx.logs, ...workerLogs].join('\n')
      expect(everything).not.toContain('originals/')
      for (const r of rows) expect(everything).not.toContain(r.original_key.split('/')[1])
    })
  })
}
