/**
 * Image uploads (api-spec §4.6, contract §5): presigned PUT URLs into private storage, queued
 * completion, and the upload's status. Works on drafts and published properties alike. No
 * answer names an original's storage key beyond the write-only upload URL itself.
 */
import { Elysia } from 'elysia'
import { randomBytes } from 'node:crypto'
import type { AppDeps } from '../deps'
import { authPlugin } from '../plugins/auth'
import { IdempotencyKeyHeader, pathIdsToNumbers } from '../../shared/platform/schemas'
import { idempotent } from '../../shared/platform/idempotency'
import { findProperty } from '../../db/queries/properties'
import { createUploadSession, effectiveState, findUploadSession, revertProcessing, startProcessing, type UploadSessionRow } from '../../db/queries/images'
import { notFound } from '../../shared/platform/errors'
import {
  CompleteImageUploadResponse, CreateImageUploadRequest, CreateImageUploadResponse, ImageUploadStatusResponse, UploadParams,
} from '../../shared/media/schemas'
import { t } from 'elysia'

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const PropertyNotFound = () => notFound('Property')
const UploadNotFound = () => notFound('Upload')

/** Unguessable, and unrelated to any id that appears in an answer. */
const newOriginalKey = () => `originals/${randomBytes(16).toString('hex')}`

export const imageRoutes = (deps: AppDeps) => {
  const { db } = deps.database
  const { storage, config } = deps

  /** contract §8: an upload id that is malformed, unknown, or of another property or business is a 404. */
  async function sessionOf(businessId: number, propertyId: number, uploadId: string): Promise<UploadSessionRow> {
    if (!UUID_RE.test(uploadId)) throw UploadNotFound()
    const session = await findUploadSession(db, { businessId, propertyId, uploadId: uploadId.toLowerCase() })
    if (!session) throw UploadNotFound()
    return session
  }

  return new Elysia({ name: 'routes.images', prefix: '/v1', detail: { tags: ['Images'] } })
    .use(authPlugin)
    .post(
      '/properties/:property_id/images/uploads',
      async ({ auth, params, body, headers, set }) => {
        const result = await idempotent(db, { apiKeyId: auth.apiKeyId, operation: 'createImageUpload', key: headers['idempotency-key'], body: { property_id: params.property_id, ...body } }, async (tx) => {
          const property = await findProperty(tx, auth.business.id, params.property_id)
          if (!property) throw PropertyNotFound()
          const expiresAt = new Date(Date.now() + config.uploadUrlTtlSeconds * 1000)
          const session = await createUploadSession(tx, {
            businessId: auth.business.id,
            propertyId: property.id,
            expiresAt,
            files: body.files.map((f) => ({ filename: f.filename, contentType: f.content_type, declaredSize: f.size, originalKey: newOriginalKey() })),
          })
          const files = await Promise.all(session.files.map(async (f) => {
            const put = await storage.presignPut(f.originalKey, { contentType: f.contentType, maxSize: f.declaredSize, expiresInSeconds: config.uploadUrlTtlSeconds })
            return { file_id: f.id, method: 'PUT' as const, url: put.url, headers: { 'content-type': put.headers['content-type'] } }
          }))
          return { status: 201, body: { status: 'ok' as const, upload_id: session.id, expires_at: expiresAt.toISOString(), files } }
        })
        if (result.replayed) set.headers['idempotent-replayed'] = 'true'
        set.status = result.status
        return result.body
      },
      {
        operation: 'createImageUpload',
        params: t.Object({ property_id: UploadParams.properties.property_id }),
        transform: pathIdsToNumbers,
        headers: IdempotencyKeyHeader,
        body: CreateImageUploadRequest,
        response: { 201: CreateImageUploadResponse },
        detail: {
          
          summary: 'Prepare image uploads',
          description:
            'Returns one short-lived (≤ 15 min) `PUT` URL per file, writing only into private storage. Upload each file with exactly the returned `headers`, ' +
            'then call `completeImageUpload`. Works on drafts, so the intended order is create → upload → publish. No URL to download an original is ever returned.',
        },
      },
    )
    .post(
      '/properties/:property_id/images/uploads/:upload_id/complete',
      async ({ auth, params, set }) => {
        const session = await sessionOf(auth.business.id, params.property_id, params.upload_id)
        const state = effectiveState(session)
        if (state === 'expired') throw UploadNotFound()
        if (state === 'pending' || state === 'processing') {
          await startProcessing(db, session.id)
          try {
            // Also on `processing`: a repeated call re-queues a job that might have been lost; the job id makes it one job.
            await deps.queues.enqueue('upload-complete', { uploadId: session.id })
          } catch (error) {
            if (state === 'pending') await revertProcessing(db, session.id).catch(() => {})
            throw error
          }
        }
        set.status = 202
        return { status: 'ok' as const, upload_id: session.id, state: state === 'pending' ? 'processing' as const : state }
      },
      {
        operation: 'completeImageUpload',
        params: UploadParams,
        transform: pathIdsToNumbers,
        response: { 202: CompleteImageUploadResponse },
        detail: {
          
          summary: 'Complete an upload',
          description:
            'Queues the checks and processing of the uploaded files and answers 202 at once. Each file is checked (uploaded, really a JPEG/PNG/WebP, within its declared size and the pixel limit); ' +
            'a bad file is `failed` with a reason while the others go on. Ready images are appended to the property’s `images[]` in upload order. ' +
            'Repeating the call is harmless. An expired (never completed) or unknown upload is a 404.',
        },
      },
    )
    .get(
      '/properties/:property_id/images/uploads/:upload_id',
      async ({ auth, params }) => {
        const session = await sessionOf(auth.business.id, params.property_id, params.upload_id)
        return {
          status: 'ok' as const,
          data: {
            upload_id: session.id,
            state: effectiveState(session),
            files: session.files.map((f) => ({
              file_id: f.id,
              state: f.state,
              ...(f.state === 'ready' && f.imageId ? { image_id: f.imageId } : {}),
              ...(f.state === 'failed' && f.error ? { error: f.error } : {}),
            })),
          },
          authenticated_as: auth.business.name,
        }
      },
      {
        operation: 'getImageUpload',
        params: UploadParams,
        transform: pathIdsToNumbers,
        response: { 200: ImageUploadStatusResponse },
        detail: {
          
          summary: 'Upload status',
          description: 'The state of the upload and of each file; poll it after `completeImageUpload` until the state is `completed` or `failed`.',
        },
      },
    )
}
