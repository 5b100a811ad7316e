/**
 * The `local` driver: objects are files under DATA_DIR (`private/` and `public/`). Uploads go
 * through the API's `PUT /storage/<key>` with an HMAC-signed, expiring URL bound to the key, the
 * content type and the declared size; public copies are served by the API's `/cdn/*`.
 * Writes go to a temporary file renamed into place, so a reader never sees half an object.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Dirent } from 'node:fs'
import { copyFile, mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import type { Config } from '../config'
import { assertKey, assertPrefix, type Area, type ObjectInfo, type PresignPutOptions, type PresignedPut, type Storage } from './interface'

export type UploadCheck = { ok: true; maxSize: number } | { ok: false; reason: 'signature' | 'expired' | 'content_type'; detail: string }

export class LocalStorage implements Storage {
  readonly driver = 'local' as const
  readonly root: string

  constructor(private readonly config: Pick<Config, 'dataDir' | 'publicUrl' | 'cdnUrl' | 'appSecret'>) {
    this.root = resolve(config.dataDir)
  }

  path(area: Area, key: string): string {
    assertKey(key)
    return join(this.root, area, key)
  }

  private tmpPath(area: Area): string {
    return join(this.root, area, '.tmp', randomBytes(12).toString('hex'))
  }

  async ensureReady(): Promise<void> {
    await mkdir(join(this.root, 'private', '.tmp'), { recursive: true })
    await mkdir(join(this.root, 'public', '.tmp'), { recursive: true })
  }

  async put(area: Area, key: string, body: Uint8Array): Promise<void> {
    const target = this.path(area, key)
    const tmp = this.tmpPath(area)
    await mkdir(dirname(tmp), { recursive: true })
    await Bun.write(tmp, body)
    await mkdir(dirname(target), { recursive: true })
    await rename(tmp, target)
  }

  async putFile(area: Area, key: string, path: string): Promise<void> {
    const target = this.path(area, key)
    const tmp = this.tmpPath(area)
    await mkdir(dirname(tmp), { recursive: true })
    await copyFile(path, tmp)
    await mkdir(dirname(target), { recursive: true })
    await rename(tmp, target)
  }

  /**
   * Streams a request body into `key`, refusing it as soon as it passes `maxSize` bytes.
   * Returns the size written, or null when the body was too large (nothing is kept).
   */
  async putStream(area: Area, key: string, body: ReadableStream<Uint8Array> | null, maxSize: number): Promise<number | null> {
    const target = this.path(area, key)
    const tmp = this.tmpPath(area)
    await mkdir(dirname(tmp), { recursive: true })
    const file = await open(tmp, 'w')
    let size = 0
    try {
      if (body) {
        for await (const chunk of body) {
          size += chunk.byteLength
          if (size > maxSize) {
            await file.close()
            await rm(tmp, { force: true })
            return null
          }
          await file.write(chunk)
        }
      }
      await file.close()
    } catch (error) {
      await file.close().catch(() => {})
      await rm(tmp, { force: true })
      throw error
    }
    await mkdir(dirname(target), { recursive: true })
    await rename(tmp, target)
    return size
  }

  async get(area: Area, key: string): Promise<Uint8Array | null> {
    const file = Bun.file(this.path(area, key))
    try {
      return new Uint8Array(await file.arrayBuffer())
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw error
    }
  }

  async getHead(area: Area, key: string, length: number): Promise<Uint8Array | null> {
    let handle: FileHandle
    try {
      handle = await open(this.path(area, key), 'r')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw error
    }
    try {
      const buffer = Buffer.alloc(length)
      const { bytesRead } = await handle.read(buffer, 0, length, 0)
      return new Uint8Array(buffer.buffer, buffer.byteOffset, bytesRead)
    } finally {
      await handle.close()
    }
  }

  async head(area: Area, key: string): Promise<ObjectInfo | null> {
    try {
      const s = await stat(this.path(area, key))
      return { size: s.size, contentType: null }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw error
    }
  }

  async getToFile(area: Area, key: string, path: string): Promise<boolean> {
    try {
      await copyFile(this.path(area, key), path)
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw error
    }
  }

  async delete(area: Area, key: string): Promise<void> {
    await rm(this.path(area, key), { force: true })
  }

  async list(area: Area, prefix: string, limit = 10_000): Promise<string[]> {
    assertPrefix(prefix)
    const keys: string[] = []
    const walk = async (dir: string, keyPrefix: string): Promise<void> => {
      let entries: Dirent[]
      try {
        entries = await readdir(dir, { withFileTypes: true })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
        throw error
      }
      for (const entry of entries) {
        if (keys.length >= limit) return
        if (entry.isDirectory()) await walk(join(dir, entry.name), `${keyPrefix}${entry.name}/`)
        else keys.push(`${keyPrefix}${entry.name}`)
      }
    }
    await walk(this.path(area, prefix.slice(0, -1)), prefix)
    return keys
  }

  /** The directory of the prefix goes as a whole: no object under it survives. */
  async deletePrefix(area: Area, prefix: string): Promise<number> {
    const count = (await this.list(area, prefix)).length
    await rm(this.path(area, prefix.slice(0, -1)), { recursive: true, force: true })
    return count
  }

  async presignPut(key: string, options: PresignPutOptions): Promise<PresignedPut> {
    assertKey(key)
    const expires = Math.floor(Date.now() / 1000) + options.expiresInSeconds
    const sig = this.sign(key, options.contentType, options.maxSize, expires)
    const query = new URLSearchParams({ expires: String(expires), max: String(options.maxSize), sig })
    return { url: `${this.config.publicUrl}/storage/${key}?${query}`, headers: { 'content-type': options.contentType } }
  }

  publicUrl(key: string): string {
    assertKey(key)
    return `${this.config.cdnUrl}/${key}`
  }

  private sign(key: string, contentType: string, maxSize: number, expires: number): string {
    return createHmac('sha256', this.config.appSecret).update(`local-put\n${key}\n${contentType.toLowerCase()}\n${maxSize}\n${expires}`).digest('base64url')
  }

  /** Checks a `PUT /storage/<key>` request against its signature (constant-time). */
  verifyUpload(key: string, query: Record<string, string | undefined>, contentType: string | null, nowMs = Date.now()): UploadCheck {
    const expires = Number(query.expires)
    const maxSize = Number(query.max)
    const sig = query.sig ?? ''
    if (!Number.isInteger(expires) || !Number.isInteger(maxSize) || maxSize < 1 || !sig) {
      return { ok: false, reason: 'signature', detail: 'The upload URL is incomplete or malformed' }
    }
    try {
      assertKey(key)
    } catch {
      return { ok: false, reason: 'signature', detail: 'The upload URL signature does not match' }
    }
    const ct = (contentType ?? '').split(';')[0].trim().toLowerCase()
    const expected = Buffer.from(this.sign(key, ct, maxSize, expires))
    const given = Buffer.from(sig)
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
      // The content type is part of the signature: a different one cannot be told from tampering
      // except by checking whether the signature is valid for some other type, which we do not store.
      return ct === '' || !ct.startsWith('image/')
        ? { ok: false, reason: 'content_type', detail: 'Content-Type must be the one returned with the upload URL' }
        : { ok: false, reason: 'signature', detail: 'The upload URL signature does not match (wrong Content-Type, or the URL was altered)' }
    }
    if (expires * 1000 < nowMs) return { ok: false, reason: 'expired', detail: 'The upload URL has expired; create a new upload' }
    return { ok: true, maxSize }
  }
}
