/**
 * Importing photos by URL (contract §9.2), for migrations from another CRM. An import is an
 * upload session of kind `import` whose files the `upload-complete` worker fetches itself, with
 * the SSRF-safe fetch (shared/platform/fetch.ts: every hop resolved and checked, the checked
 * address connected to, 30 s, 25 MiB, 5 redirects), into private storage; from there the bytes
 * are treated exactly like an uploaded file (the same checks, states and status read).
 */
import type { Db } from '../../db/client'
import { createUploadSession } from '../../db/queries/images'
import { FetchError, IMAGE_IMPORT_LIMITS, safeFetch, type ResolveHost, type SafeFetchResponse } from '../platform/fetch'
import type { Services } from '../platform/services'
import { requireProperty } from './media-writes'
import { MAX_UPLOAD_BYTES, type ImageImport } from './schemas'
import { newOriginalKey } from './storage-keys'

/** An import is never completed by a client; its session only needs a date for the status read and the weekly purge. */
const IMPORT_SESSION_DAYS = 1

/** The answer of `importImages`; the upload-complete job is queued once the transaction committed. */
export interface StartedImport {
  status: 'ok'
  upload_id: string
  state: 'processing'
}

/**
 * Creates the import (a `processing` session with one file per URL, in request order), inside
 * the caller's transaction (the route's Idempotency-Key claim), so a replay finds the same one.
 */
export async function startImageImport(tx: Db, request: { businessId: number; propertyId: number; images: ImageImport['images'] }): Promise<StartedImport> {
  const property = await requireProperty(tx, request.businessId, request.propertyId)
  const session = await createUploadSession(tx, {
    businessId: request.businessId,
    propertyId: property.id,
    kind: 'import',
    expiresAt: new Date(Date.now() + IMPORT_SESSION_DAYS * 24 * 3600 * 1000),
    files: request.images.map((image) => ({
      // Kept privately like an upload's file name; the URL's last segment reads best in the CLI.
      filename: image.url.slice(0, 255),
      // Unknown until fetched: the real type comes from the bytes, as for every file.
      contentType: '',
      declaredSize: MAX_UPLOAD_BYTES,
      originalKey: newOriginalKey(),
      sourceUrl: image.url,
      title: image.title ?? '',
      watermark: image.watermark ?? true,
    })),
  })
  return { status: 'ok', upload_id: session.id, state: 'processing' }
}

/**
 * Queues the fetch of a committed import; repeating it is harmless (the job id is the upload's).
 * A failed enqueue is logged, not thrown: the session is `processing` in PostgreSQL and the media
 * sweep queues it again, so the answer stands.
 */
export async function queueImport(deps: Pick<Services, 'queues' | 'logger'>, uploadId: string): Promise<void> {
  try {
    await deps.queues.enqueue('upload-complete', { uploadId })
  } catch (error) {
    deps.logger.warn('upload-complete enqueue failed for an import; the media sweep will queue it', { upload_id: uploadId, error: (error as Error).message })
  }
}

export type FetchVerdict = { ok: true } | { ok: false; reason: string }

/** What the import fetch needs beyond storage: the allow-list, the bound, and (tests) a resolver. */
export type ImportDeps = Pick<Services, 'config' | 'storage'> & { resolveHost?: ResolveHost }

/**
 * Fetches one import's URL into its original key in private storage. A URL that cannot be
 * fetched fails its file with the fetch's code as `error` (contract §9.2: `url_not_allowed` for a
 * host that is or resolves to a non-public address, at any hop; `timeout`, `too_large`,
 * `too_many_redirects`, `connection_failed`, `bad_url`; `http_status_<n>` for an answer other
 * than 2xx). Not retried: the answer would be the same, and the integrator can import it again.
 * A file fetched by an earlier run of the job is not fetched twice.
 */
export async function fetchImportedFile(deps: ImportDeps, file: { originalKey: string; sourceUrl: string }): Promise<FetchVerdict> {
  if (await deps.storage.head('private', file.originalKey)) return { ok: true }
  let response: SafeFetchResponse
  try {
    response = await safeFetch(file.sourceUrl, {
      allowHosts: deps.config.imageImportAllowHosts,
      resolve: deps.resolveHost,
      timeoutMs: deps.config.imageImportTimeoutMs,
      maxBytes: IMAGE_IMPORT_LIMITS.maxBytes,
      maxRedirects: IMAGE_IMPORT_LIMITS.maxRedirects,
      headers: { accept: 'image/jpeg, image/png, image/webp, */*;q=0.1' },
    })
  } catch (error) {
    if (error instanceof FetchError) return { ok: false, reason: error.code }
    throw error
  }
  if (response.status < 200 || response.status > 299) return { ok: false, reason: `http_status_${response.status}` }
  await deps.storage.put('private', file.originalKey, response.body, 'application/octet-stream')
  return { ok: true }
}
