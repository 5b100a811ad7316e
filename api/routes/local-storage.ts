/**
 * The `local` storage driver's HTTP side (not under /v1, no API key; hidden from OpenAPI):
 *  - `PUT /storage/originals/<key>?expires&max&sig`: the presigned upload. The HMAC signature
 *    binds key, content type, size bound and expiry; bodies over the bound are cut off (413).
 *    Write-only: nothing under /storage is ever readable.
 *  - `GET /cdn/images/<key>`: public copies only. Their keys are unguessable and never rewritten,
 *    so this is the one documented exception to `Cache-Control: no-store`: a year, immutable.
 * With STORAGE_DRIVER=s3 neither route exists (uploads go to S3, CDN_URL points at the bucket).
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { AppError } from '../../shared/platform/errors'
import { LocalStorage } from '../../shared/platform/storage/local'
import { OUTPUT_CONTENT_TYPE } from '../../shared/media/output'

const UPLOAD_KEY_RE = /^originals\/[0-9a-f]{32}$/
const PUBLIC_KEY_RE = /^images\/[0-9a-f]{32}\.jpg$/
const IMMUTABLE = 'public, max-age=31536000, immutable'

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
      async ({ params, set }) => {
        const key = params['*']
        if (!PUBLIC_KEY_RE.test(key)) throw new AppError('not_found', 'Not found')
        const file = Bun.file(storage.path('public', key))
        if (!(await file.exists())) throw new AppError('not_found', 'Not found')
        set.headers['cache-control'] = IMMUTABLE
        return new Response(file, { headers: { 'content-type': OUTPUT_CONTENT_TYPE } })
      },
      { detail: { hide: true } },
    )
}
