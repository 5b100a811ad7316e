/**
 * What version 1.1 added to both storage drivers (contract §9.3, §9.4): streamed files in and
 * out (video originals and renditions), listing a prefix, and deleting a prefix as a whole —
 * against the local directory and an S3-compatible server (s3rver), with content types kept.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../shared/platform/config'
import { createStorage, type Storage } from '../../shared/platform/storage'
import { startS3Server, type S3Server } from '../helpers/s3'

let dataDir: string
let work: string
let s3: S3Server
const drivers: Record<string, Storage> = {}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'storage-files-'))
  work = await mkdtemp(join(tmpdir(), 'storage-files-work-'))
  s3 = await startS3Server()
  drivers.local = await createStorage(loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir, PUBLIC_URL: 'http://api.test' }))
  drivers.s3 = await createStorage(loadConfig({ NODE_ENV: 'test', ...s3.env }))
  for (const d of Object.values(drivers)) await d.ensureReady()
})
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true })
  await rm(work, { recursive: true, force: true })
  await s3.stop()
})

const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255)

for (const name of ['local', 's3']) {
  describe(`${name} driver`, () => {
    const storage = () => drivers[name]

    test('putFile stores a local file under a key; getToFile streams it back; a missing key is false', async () => {
      const source = join(work, `${name}-in`)
      const body = bytes(3 * 1024 * 1024 + 7)
      await writeFile(source, body)
      const key = `videos/${crypto.randomUUID().replace(/-/g, '')}/video.mp4`
      await storage().putFile('public', key, source, 'video/mp4')
      const info = await storage().head('public', key)
      expect(info?.size).toBe(body.byteLength)
      if (name === 's3') expect(info?.contentType).toBe('video/mp4')
      const target = join(work, `${name}-out`)
      expect(await storage().getToFile('public', key, target)).toBe(true)
      expect(Buffer.from(await readFile(target)).equals(Buffer.from(body))).toBe(true)
      expect(await storage().getToFile('public', `${key}-missing`, join(work, 'none'))).toBe(false)
    })

    test('list names the keys under a prefix only; deletePrefix removes them all and nothing else', async () => {
      const id = crypto.randomUUID().replace(/-/g, '')
      const prefix = `videos/${id}/`
      const names = ['playlist.m3u8', 'seg-000.ts', 'seg-001.ts', 'video.mp4', 'poster.jpg']
      for (const n of names) await storage().put('public', `${prefix}${n}`, bytes(100), 'application/octet-stream')
      const neighbour = `videos/${id}x/seg-000.ts`
      await storage().put('public', neighbour, bytes(10), 'video/mp2t')
      expect((await storage().list('public', prefix)).sort()).toEqual(names.map((n) => `${prefix}${n}`).sort())
      expect(await storage().list('private', prefix)).toEqual([])
      expect(await storage().deletePrefix('public', prefix)).toBe(names.length)
      expect(await storage().list('public', prefix)).toEqual([])
      expect(await storage().head('public', neighbour)).not.toBeNull()
      expect(await storage().deletePrefix('public', prefix)).toBe(0)
    })

    test('prefixes must be a key ending with `/`', async () => {
      for (const bad of ['', '/', 'videos', '../x/', 'videos//']) {
        await expect(storage().list('public', bad)).rejects.toThrow()
        await expect(storage().deletePrefix('public', bad)).rejects.toThrow()
      }
    })
  })
}
