/**
 * An S3-compatible server for the s3 driver's tests: s3rver, in-process, on a free port, with a
 * private and a public bucket in a temporary directory removed at stop.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver'
import { freePort } from './processes'

export interface S3Server {
  endpoint: string
  env: Record<string, string>
  stop(): Promise<void>
}

/** `address` is where s3rver listens; `::` also answers `localhost` by either family (the public-endpoint test). */
export async function startS3Server(options: { address?: string } = {}): Promise<S3Server> {
  const port = await freePort()
  const directory = await mkdtemp(join(tmpdir(), 's3rver-'))
  const suffix = Math.random().toString(36).slice(2, 8)
  const privateBucket = `originals-${suffix}`
  const publicBucket = `public-${suffix}`
  const server = new S3rver({
    port,
    address: options.address ?? '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: privateBucket }, { name: publicBucket }],
  })
  await server.run()
  const endpoint = `http://127.0.0.1:${port}`
  return {
    endpoint,
    env: {
      STORAGE_DRIVER: 's3',
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_PRIVATE_BUCKET: privateBucket,
      S3_PUBLIC_BUCKET: publicBucket,
      S3_FORCE_PATH_STYLE: 'true',
      // Path-style public URLs: the bucket's own endpoint plays the CDN.
      CDN_URL: `${endpoint}/${publicBucket}`,
    },
    async stop() {
      await server.close()
      await rm(directory, { recursive: true, force: true })
    },
  }
}
