/**
 * S3_PUBLIC_ENDPOINT (compose: the service talks to `http://minio:9000`, clients on the host to
 * `http://localhost:9000`): a presigned upload URL carries the public endpoint and a PUT to it
 * works, while every other call of the driver goes to S3_ENDPOINT. s3rver listens on both
 * names here: `127.0.0.1` plays the internal address, `localhost` the public one; s3rver does not
 * check V4 signatures, so the test checks the host was signed as MinIO would (helpers/sigv4.ts).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../shared/platform/config'
import { createStorage, type Storage } from '../../shared/platform/storage'
import { startS3Server, type S3Server } from '../helpers/s3'
import { presignedSignatureValid } from '../helpers/sigv4'

let s3: S3Server
let storage: Storage
let publicEndpoint: string

beforeAll(async () => {
  s3 = await startS3Server({ address: '::' })
  publicEndpoint = s3.endpoint.replace('127.0.0.1', 'localhost')
  storage = await createStorage(loadConfig({ NODE_ENV: 'test', ...s3.env, S3_PUBLIC_ENDPOINT: publicEndpoint }))
})
afterAll(() => s3.stop())

const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4, 5, 6])

test('the presigned URL names the public endpoint, a PUT to it lands where the service reads', async () => {
  const key = `originals/${crypto.randomUUID()}`
  const put = await storage.presignPut(key, { contentType: 'image/jpeg', maxSize: 100, expiresInSeconds: 300 })
  expect(new URL(put.url).origin).toBe(publicEndpoint)
  const res = await fetch(put.url, { method: 'PUT', headers: put.headers, body: jpeg })
  expect(res.status, await res.text()).toBe(200)
  expect(await storage.head('private', key)).toMatchObject({ size: jpeg.byteLength })
})

test('the signature is valid for the public host only (MinIO checks it; s3rver does not)', async () => {
  const put = await storage.presignPut(`originals/${crypto.randomUUID()}`, { contentType: 'image/jpeg', maxSize: 100, expiresInSeconds: 300 })
  const secret = s3.env.S3_SECRET_ACCESS_KEY
  expect(presignedSignatureValid(put.url, 'PUT', put.headers, secret)).toBe(true)
  expect(presignedSignatureValid(put.url.replace(publicEndpoint, s3.endpoint), 'PUT', put.headers, secret)).toBe(false)
  expect(presignedSignatureValid(put.url, 'PUT', { 'content-type': 'image/png' }, secret)).toBe(false)
})

test('without S3_PUBLIC_ENDPOINT the URL names S3_ENDPOINT', async () => {
  const plain = await createStorage(loadConfig({ NODE_ENV: 'test', ...s3.env }))
  const put = await plain.presignPut(`originals/${crypto.randomUUID()}`, { contentType: 'image/png', maxSize: 10, expiresInSeconds: 60 })
  expect(new URL(put.url).origin).toBe(s3.endpoint)
})

test('S3_PUBLIC_ENDPOINT must be an http(s) URL', () => {
  expect(() => loadConfig({ NODE_ENV: 'test', ...s3.env, S3_PUBLIC_ENDPOINT: 'minio:9000' })).toThrow(ConfigError)
  expect(() => loadConfig({ NODE_ENV: 'test', ...s3.env, S3_PUBLIC_ENDPOINT: 'ftp://localhost:9000' })).toThrow('S3_PUBLIC_ENDPOINT must use http: or https:')
})
