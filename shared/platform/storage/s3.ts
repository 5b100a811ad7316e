/**
 * The `s3` driver (AWS S3, MinIO, R2, any S3-compatible store): originals in S3_PRIVATE_BUCKET,
 * public copies in S3_PUBLIC_BUCKET served through CDN_URL (the bucket's public endpoint or a
 * CDN in front of it). Checksums are computed only when an operation requires them, which keeps
 * the SDK compatible with stores that do not implement the newer flexible checksums.
 */
import { createReadStream, createWriteStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type GetObjectCommandOutput,
} from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import type { Config } from '../config'
import { assertKey, assertPrefix, type Area, type ObjectInfo, type PresignPutOptions, type PresignedPut, type Storage } from './interface'

/**
 * Deletes in flight at once when a prefix goes (one request per object: DeleteObjects needs
 * Content-MD5, which some stores want and the SDK no longer sends).
 */
const DELETE_CONCURRENCY = 16

const isNotFound = (error: unknown) => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } }
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404
}

/** A GetObject answer always has a body (the SDK's output type leaves it optional). */
function bytesOf(res: GetObjectCommandOutput): Promise<Uint8Array> {
  if (!res.Body) throw new Error('GetObject answered without a body')
  return res.Body.transformToByteArray()
}

export class S3Storage implements Storage {
  readonly driver = 's3' as const
  readonly client: S3Client
  /**
   * Presigned URLs carry the host they were signed for, so they are signed for the endpoint the
   * client will send them to (S3_PUBLIC_ENDPOINT) while the service talks to S3_ENDPOINT.
   * Presigning sends no request: this client never connects anywhere.
   */
  private readonly signer: S3Client
  private readonly buckets: Record<Area, string>

  constructor(private readonly config: Pick<Config, 's3' | 'cdnUrl'>) {
    const { s3 } = config
    const clientFor = (endpoint: string | undefined) =>
      new S3Client({
        endpoint,
        region: s3.region,
        forcePathStyle: s3.forcePathStyle,
        credentials: s3.accessKeyId && s3.secretAccessKey ? { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } : undefined,
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      })
    this.client = clientFor(s3.endpoint)
    this.signer = s3.publicEndpoint && s3.publicEndpoint !== s3.endpoint ? clientFor(s3.publicEndpoint) : this.client
    this.buckets = { private: s3.privateBucket, public: s3.publicBucket }
  }

  async ensureReady(): Promise<void> {}

  async put(area: Area, key: string, body: Uint8Array, contentType: string): Promise<void> {
    assertKey(key)
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.buckets[area],
        Key: key,
        Body: body,
        ContentType: contentType,
        // Public keys are unguessable and never rewritten with different content.
        CacheControl: area === 'public' ? 'public, max-age=31536000, immutable' : undefined,
      }),
    )
  }

  /** Streamed with its length known, so the SDK sends one PUT without holding the file in memory. */
  async putFile(area: Area, key: string, path: string, contentType: string): Promise<void> {
    assertKey(key)
    const { size } = await stat(path)
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.buckets[area],
        Key: key,
        Body: createReadStream(path),
        ContentLength: size,
        ContentType: contentType,
        CacheControl: area === 'public' ? 'public, max-age=31536000, immutable' : undefined,
      }),
    )
  }

  async getToFile(area: Area, key: string, path: string): Promise<boolean> {
    assertKey(key)
    let body: GetObjectCommandOutput['Body']
    try {
      body = (await this.client.send(new GetObjectCommand({ Bucket: this.buckets[area], Key: key }))).Body
    } catch (error) {
      if (isNotFound(error)) return false
      throw error
    }
    const stream = body instanceof Readable ? body : Readable.fromWeb((body as { transformToWebStream(): ReadableStream }).transformToWebStream() as never)
    await pipeline(stream, createWriteStream(path))
    return true
  }

  async get(area: Area, key: string): Promise<Uint8Array | null> {
    assertKey(key)
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.buckets[area], Key: key }))
      return await bytesOf(res)
    } catch (error) {
      if (isNotFound(error)) return null
      throw error
    }
  }

  async getHead(area: Area, key: string, length: number): Promise<Uint8Array | null> {
    assertKey(key)
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.buckets[area], Key: key, Range: `bytes=0-${length - 1}` }))
      const bytes = await bytesOf(res)
      // A store that ignores Range answers the whole object; keep only what was asked for.
      return bytes.byteLength > length ? bytes.subarray(0, length) : bytes
    } catch (error) {
      if (isNotFound(error)) return null
      // An empty object cannot satisfy a range.
      if ((error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode === 416) return new Uint8Array(0)
      throw error
    }
  }

  async head(area: Area, key: string): Promise<ObjectInfo | null> {
    assertKey(key)
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.buckets[area], Key: key }))
      return { size: res.ContentLength ?? 0, contentType: res.ContentType ?? null }
    } catch (error) {
      if (isNotFound(error)) return null
      throw error
    }
  }

  async delete(area: Area, key: string): Promise<void> {
    assertKey(key)
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.buckets[area], Key: key }))
    } catch (error) {
      if (!isNotFound(error)) throw error
    }
  }

  async list(area: Area, prefix: string, limit = 10_000): Promise<string[]> {
    assertPrefix(prefix)
    const keys: string[] = []
    let token: string | undefined
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.buckets[area], Prefix: prefix, ContinuationToken: token, MaxKeys: Math.min(1000, limit - keys.length) }),
      )
      for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key)
      token = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (token && keys.length < limit)
    return keys
  }

  /** Lists and deletes page by page until nothing is left under the prefix. */
  async deletePrefix(area: Area, prefix: string): Promise<number> {
    let deleted = 0
    for (;;) {
      const keys = await this.list(area, prefix, 1000)
      if (keys.length === 0) return deleted
      for (let i = 0; i < keys.length; i += DELETE_CONCURRENCY) {
        await Promise.all(keys.slice(i, i + DELETE_CONCURRENCY).map((key) => this.delete(area, key)))
      }
      deleted += keys.length
    }
  }

  /**
   * The Content-Type is signed, so the PUT must carry exactly it. The size cannot be bounded by a
   * presigned PUT (only an exact Content-Length could be signed); upload-complete refuses an
   * object larger than declared and deletes it.
   */
  async presignPut(key: string, options: PresignPutOptions): Promise<PresignedPut> {
    assertKey(key)
    const command = new PutObjectCommand({ Bucket: this.buckets.private, Key: key, ContentType: options.contentType })
    const url = await getSignedUrl(this.signer, command, { expiresIn: options.expiresInSeconds, signableHeaders: new Set(['content-type']) })
    return { url, headers: { 'content-type': options.contentType } }
  }

  publicUrl(key: string): string {
    assertKey(key)
    return `${this.config.cdnUrl}/${key}`
  }

  destroy(): void {
    this.client.destroy()
    if (this.signer !== this.client) this.signer.destroy()
  }
}
