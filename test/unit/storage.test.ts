import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../shared/platform/config'
import { createStorage, type Storage } from '../../shared/platform/storage'
import { LocalStorage } from '../../shared/platform/storage/local'
import { startS3Server, type S3Server } from '../helpers/s3'

let dataDir: string
let s3: S3Server
const drivers: Record<string, Storage> = {}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'storage-test-'))
  s3 = await startS3Server()
  drivers.local = await createStorage(loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir, PUBLIC_URL: 'http://api.test' }))
  drivers.s3 = await createStorage(loadConfig({ NODE_ENV: 'test', ...s3.env }))
  for (const d of Object.values(drivers)) await d.ensureReady()
})
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true })
  await s3.stop()
})

const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255)

for (const name of ['local', 's3']) {
  describe(`${name} driver`, () => {
    const storage = () => drivers[name]

    test('put, head, get, getHead and delete in each area', async () => {
      for (const area of ['private', 'public'] as const) {
        const key = `t/${area}-${crypto.randomUUID()}`
        expect(await storage().head(area, key)).toBeNull()
        expect(await storage().get(area, key)).toBeNull()
        expect(await storage().getHead(area, key, 10)).toBeNull()
        const body = bytes(3000)
        await storage().put(area, key, body, 'image/jpeg')
        expect((await storage().head(area, key))?.size).toBe(3000)
        expect(Buffer.from((await storage().get(area, key))!)).toEqual(Buffer.from(body))
        expect(Buffer.from((await storage().getHead(area, key, 16))!)).toEqual(Buffer.from(body.subarray(0, 16)))
        expect((await storage().getHead(area, key, 10_000))!.byteLength).toBe(3000)
        await storage().delete(area, key)
        expect(await storage().head(area, key)).toBeNull()
        await storage().delete(area, key) // deleting twice is fine
      }
    })

    test('the areas are separate', async () => {
      const key = `t/${crypto.randomUUID()}`
      await storage().put('private', key, bytes(10), 'image/png')
      expect(await storage().head('public', key)).toBeNull()
      await storage().delete('private', key)
    })

    test('keys with traversal or odd characters are refused', async () => {
      for (const key of ['../etc/passwd', 'a/../../b', '/abs', 'a b', '', 'a//b']) {
        await expect(storage().put('private', key, bytes(1), 'image/png')).rejects.toThrow('invalid storage key')
      }
    })

    test('publicUrl is CDN_URL + / + key', () => {
      const url = storage().publicUrl('images/abc.jpg')
      expect(url).toBe(name === 'local' ? 'http://api.test/cdn/images/abc.jpg' : `${s3.env.CDN_URL}/images/abc.jpg`)
    })

    test('a presigned PUT writes the private object with the returned headers', async () => {
      const key = `originals/${crypto.randomUUID().replace(/-/g, '')}`
      const put = await storage().presignPut(key, { contentType: 'image/png', maxSize: 100, expiresInSeconds: 60 })
      expect(put.headers).toEqual({ 'content-type': 'image/png' })
      if (name === 's3') {
        const res = await fetch(put.url, { method: 'PUT', headers: put.headers, body: bytes(50) })
        expect(res.status, await res.text()).toBe(200)
        expect((await storage().head('private', key))?.size).toBe(50)
        // The content type is signed, so S3 refuses another one (s3rver checks no presigned signature, so only the signing is asserted).
        expect(new URL(put.url).searchParams.get('X-Amz-SignedHeaders')?.split(';')).toContain('content-type')
        expect(Number(new URL(put.url).searchParams.get('X-Amz-Expires'))).toBe(60)
      } else {
        expect(put.url.startsWith(`http://api.test/storage/${key}?`)).toBe(true)
      }
    })
  })
}

describe('local upload signatures', () => {
  const local = () => drivers.local as LocalStorage
  const parts = async (key: string, contentType = 'image/jpeg', maxSize = 1000, ttl = 60) => {
    const { url } = await local().presignPut(key, { contentType, maxSize, expiresInSeconds: ttl })
    return Object.fromEntries(new URL(url).searchParams) as Record<string, string>
  }

  test('a valid URL passes and carries its size bound', async () => {
    const q = await parts('originals/abc')
    expect(local().verifyUpload('originals/abc', q, 'image/jpeg')).toEqual({ ok: true, maxSize: 1000 })
    expect(local().verifyUpload('originals/abc', q, 'IMAGE/JPEG; charset=binary').ok).toBe(true)
  })

  test('tampered key, size or expiry, a wrong content type, and an expired URL are refused', async () => {
    const q = await parts('originals/abc')
    expect(local().verifyUpload('originals/abd', q, 'image/jpeg')).toMatchObject({ ok: false, reason: 'signature' })
    expect(local().verifyUpload('originals/abc', { ...q, max: '1000000' }, 'image/jpeg')).toMatchObject({ ok: false, reason: 'signature' })
    expect(local().verifyUpload('originals/abc', { ...q, expires: String(Number(q.expires) + 3600) }, 'image/jpeg')).toMatchObject({
      ok: false,
      reason: 'signature',
    })
    expect(local().verifyUpload('originals/abc', { ...q, sig: q.sig.slice(0, -2) + 'AA' }, 'image/jpeg')).toMatchObject({ ok: false, reason: 'signature' })
    expect(local().verifyUpload('originals/abc', q, 'image/png')).toMatchObject({ ok: false })
    expect(local().verifyUpload('originals/abc', q, 'application/octet-stream')).toMatchObject({ ok: false, reason: 'content_type' })
    expect(local().verifyUpload('originals/abc', q, null)).toMatchObject({ ok: false, reason: 'content_type' })
    expect(local().verifyUpload('originals/abc', q, 'image/jpeg', Date.now() + 61_000)).toMatchObject({ ok: false, reason: 'expired' })
    expect(local().verifyUpload('originals/abc', {}, 'image/jpeg')).toMatchObject({ ok: false, reason: 'signature' })
  })

  test('another APP_SECRET does not accept the URL', async () => {
    const q = await parts('originals/abc')
    const other = new LocalStorage({
      dataDir,
      publicUrl: 'http://api.test',
      cdnUrl: 'http://api.test/cdn',
      appSecret: 'another-secret-of-at-least-32-characters!!',
    })
    expect(other.verifyUpload('originals/abc', q, 'image/jpeg').ok).toBe(false)
  })

  test('putStream refuses a body over the bound and keeps nothing', async () => {
    const stream = (n: number) => new Response(bytes(n)).body
    expect(await local().putStream('private', 'originals/s1', stream(100), 100)).toBe(100)
    expect(await local().putStream('private', 'originals/s2', stream(101), 100)).toBeNull()
    expect(await local().head('private', 'originals/s2')).toBeNull()
  })
})
