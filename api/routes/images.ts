/**
 * Image uploads (api-spec §4.6, contract §5): presigned PUT URLs into private storage, queued
 * completion, and the upload's status. Works on drafts and published properties alike. No
 * answer names an original's storage key beyond the write-only upload URL itself.
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import { authPlugin } from '../plugins/auth'
import { IdempotencyKeyHeader, pathIdsToNumbers } from '../../shared/platform/schemas'
import { idempotent } from '../../shared/platform/idempotency'
import { completeImageUpload, getImageUpload, startImageUpload } from '../../shared/media/operations'
import {
  CompleteImageUploadResponse, CreateImageUploadRequest, CreateImageUploadResponse, ImageUploadStatusResponse, UploadParams,
} from '../../shared/media/schemas'

export const imageRoutes = (deps: AppDeps) => {
  const { db } = deps.database

  return new Elysia({ name: 'routes.images', prefix: '/v1', detail: { tags: ['Images'] } })
    .use(authPlugin)
    .post(
      '/properties/:property_id/images/uploads',
      async ({ auth, params, body, headers, set }) => {
        const upload = { businessId: auth.business.id, propertyId: params.property_id, files: body.files }
        const result = await idempotent(db, { apiKeyId: auth.apiKeyId, operation: 'createImageUpload', key: headers['idempotency-key'], body: { property_id: params.property_id, ...body } }, async (tx) => ({
          status: 201,
          body: await startImageUpload(deps, tx, upload),
        }))
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
        const answer = await completeImageUpload(deps, { businessId: auth.business.id, propertyId: params.property_id, uploadId: params.upload_id })
        set.status = 202
        return answer
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
        const data = await getImageUpload(deps, { businessId: auth.business.id, propertyId: params.property_id, uploadId: params.upload_id })
        return { status: 'ok' as const, data, authenticated_as: auth.business.name }
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
