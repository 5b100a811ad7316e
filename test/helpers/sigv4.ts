/**
 * Checks a presigned S3 URL's SigV4 signature the way S3 and MinIO do, for the Host header a
 * request would carry. s3rver accepts any V4 signature, so the tests that depend on which host a
 * URL was signed for check it here.
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html
 */
import { createHash, createHmac } from 'node:crypto'

const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest()

export function presignedSignatureValid(rawUrl: string, method: string, headers: Record<string, string>, secretAccessKey: string): boolean {
  const url = new URL(rawUrl)
  const query = [...url.searchParams].filter(([k]) => k !== 'X-Amz-Signature')
  const signedHeaders = url.searchParams.get('X-Amz-SignedHeaders')!.split(';')
  const all: Record<string, string> = { host: url.host, ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])) }
  const canonicalRequest = [
    method,
    url.pathname,
    query
      .map(([k, v]) => [rfc3986(k), rfc3986(v)])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${k}=${v}`)
      .join('&'),
    signedHeaders.map((h) => `${h}:${(all[h] ?? '').trim()}\n`).join(''),
    signedHeaders.join(';'),
    'UNSIGNED-PAYLOAD',
  ].join('\n')
  const date = url.searchParams.get('X-Amz-Date')!
  const scope = url.searchParams.get('X-Amz-Credential')!.split('/').slice(1).join('/')
  const [day, region, service] = scope.split('/')
  const stringToSign = ['AWS4-HMAC-SHA256', date, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n')
  const key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, day), region), service), 'aws4_request')
  return hmac(key, stringToSign).toString('hex') === url.searchParams.get('X-Amz-Signature')
}
