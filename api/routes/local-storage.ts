/**
 * The `local` storage driver's HTTP side (not under /v1, no API key; hidden from OpenAPI):
 *  - `PUT /storage/originals/<key>?expires&max&sig`: the presigned upload. The HMAC signature
 *    binds key, content type, size bound and expiry; bodies over the bound are cut off (413).
 *    Write-only: nothing under /storage is ever readable.
 *  - `GET /cdn/images/<key>` and `GET /cdn/videos/<prefix>/<file>`: public copies only (photos;
 *    video renditions: HLS playlist `application/vnd.apple.mpegurl`, segments `video/mp2t`, MP4
 *    with byte ranges for seeking, JPEG poster). Their keys are unguessable and never rewritten,
 *    so this is a documented exception to `Cache-Control: no-store` (with the /docs script,
 *    routes/docs.ts): a year, immutable.
 * With STORAGE_DRIVER=s3 neither route exists (uploads go to S3, CDN_URL points at the bucket).
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { AppError } from '../../shared/platform/errors'
import { LocalStorage } from '../../shared/platform/storage/local'
import { OUTPUT_CONTENT_TYPE } from '../../shared/media/output'
import { renditionContentType } from '../../shared/media/transcode'

const UPLOAD_KEY_RE = /^originals\/[0-9a-f]{32}$/
const IMAGE_KEY_RE = /^images\/[0-9a-f]{32}\.jpg$/
const VIDEO_KEY_RE = /^videos\/[0-9a-f]{32}\/(?:playlist\.m3u8|video\.mp4|poster\.jpg|seg-\d{3,5}\.ts)$/
const IMMUTABLE = 'public, max-age=31536000, immutable'

/** The content type of a public key this route serves, or null for any other key. */
function publicContentType(key: string): string | null {
  if (IMAGE_KEY_RE.test(key)) return OUTPUT_CONTENT_TYPE
  if (VIDEO_KEY_RE.test(key)) return renditionContentType(key)
  return null
}

/** One `bytes=a-b`, `bytes=a-` or `bytes=-n` range within `size` (players seek an MP4 with these); null for anything else. */
function byteRange(header: string | null, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null
  if (!m || (m[1] === '' && m[2] === '')) return null
  let start: number
  let end: number
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]))
    end = size - 1
  } else {
    start = Number(m[1])
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)
  }
  if (start >= size || start > end) return 'unsatisfiable'
  return { start, end }
}

export const localStorageRoutes = (deps: Pick<AppDeps, 'storage'>) => {
  const app = new Elysia({ name: 'routes.local-storage', detail: { hide: true } })
  const storage = deps.storage
  if (!(storage instanceof LocalStorage)) return app
  return app
    .put(
      '/storage/*',
      async ({ params, query, request }) => {
        const key = params['*']
        if (!UPLOAD_KEY_RE.test(key)) throw new AppError('forbidden', 'The upload URL signature does not match')
        const check = storage.verifyUpload(key, query as Record<string, string | undefined>, request.headers.get('content-type'))
        if (!check.ok) throw new AppError('forbidden', check.detail)
        const declared = request.headers.get('content-length')
        if (declared !== null && Number(declared) > check.maxSize) {
          throw new AppError('payload_too_large', `The body is larger than the declared size of ${check.maxSize} bytes`)
        }
        const size = await storage.putStream('private', key, request.body, check.maxSize)
        if (size === null) throw new AppError('payload_too_large', `The body is larger than the declared size of ${check.maxSize} bytes`)
        return new Response(null, { status: 200 })
      },
      { parse: 'none', detail: { hide: true } },
    )
    .get(
      '/cdn/*',
      async ({ params, request, set }) => {
        const key = params['*']
        const contentType = publicContentType(key)
        if (!contentType) throw new AppError('not_found', 'Not found')
        const file = Bun.file(storage.path('public', key))
        if (!(await file.exists())) throw new AppError('not_found', 'Not found')
        set.headers['cache-control'] = IMMUTABLE
        const headers: Record<string, string> = { 'content-type': contentType, 'accept-ranges': 'bytes' }
        const range = byteRange(request.headers.get('range'), file.size)
        if (range === 'unsatisfiable') return new Response(null, { status: 416, headers: { ...headers, 'content-range': `bytes */${file.size}` } })
        if (range) {
          return new Response(file.slice(range.start, range.end + 1), {
            status: 206,
            headers: { ...headers, 'content-range': `bytes ${range.start}-${range.end}/${file.size}` },
          })
        }
        return new Response(file, { headers })
      },
      { detail: { hide: true } },
    )
}
