/**
 * Images (api-spec §4.6, contract §5, §9.1, §9.2): presigned PUT URLs into private storage, queued
 * completion and the upload's status; imports by URL; and managing the images afterwards (list,
 * title, cover, order, delete). Works on drafts and published properties alike. No answer names
 * an original's storage key beyond the write-only upload URL itself.
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import { idempotentAnswer } from '../idempotent-answer'
import { authPlugin } from '../plugins/auth'
import { CreatedResponse, IdempotencyKeyHeader, idParam, pathIdsToNumbers } from '../../shared/platform/schemas'
import { idempotent } from '../../shared/platform/idempotency'
import { completeImageUpload, getImageUpload, startImageUpload } from '../../shared/media/operations'
import { deleteImage, listImages, reorderImages, updateImage } from '../../shared/media/images'
import { queueImport, startImageImport } from '../../shared/media/imports'
import {
  CompleteImageUploadResponse,
  CreateImageUploadRequest,
  CreateImageUploadResponse,
  ImageImportRequest,
  ImageImportResponse,
  ImageListResponse,
  ImageOrderRequest,
  ImageParams,
  ImageUpdateRequest,
  ImageUploadStatusResponse,
  MediaIdResponse,
  UploadParams,
} from '../../shared/media/schemas'

export const imageRoutes = (deps: AppDeps) => {
  const { db } = deps.database

  return new Elysia({ name: 'routes.images', prefix: '/v1', detail: { tags: ['Images'] } })
    .use(authPlugin)
    .post(
      '/properties/:property_id/images/uploads',
      async ({ auth, params, body, headers, set }) => {
        const upload = { businessId: auth.business.id, propertyId: params.property_id, files: body.files }
        const result = await idempotent(
          db,
          { apiKeyId: auth.apiKeyId, operation: 'createImageUpload', key: headers['idempotency-key'], body: { property_id: params.property_id, ...body } },
          async (tx) => ({
            status: 201,
            body: await startImageUpload(deps, tx, upload),
          }),
        )
        return idempotentAnswer(set, result)
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
            'then call `completeImageUpload`. Works on drafts, so the intended order is ' +
            'create → upload → publish. No URL to download an original is ever returned.',
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
            'Queues the checks and processing of the uploaded files and answers 202 at once. Each file ' +
            'is checked (uploaded, really a JPEG/PNG/WebP, within its declared size and the pixel limit); ' +
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
          description:
            'The state of the upload and of each file; poll it after `completeImageUpload` (or `importImages`) until the state is `completed` or `failed`.',
        },
      },
    )
    .post(
      '/properties/:property_id/images/imports',
      async ({ auth, params, body, headers, set }) => {
        const request = { businessId: auth.business.id, propertyId: params.property_id, images: body.images }
        const result = await idempotent(
          db,
          { apiKeyId: auth.apiKeyId, operation: 'importImages', key: headers['idempotency-key'], body: { property_id: params.property_id, ...body } },
          async (tx) => ({
            status: 202,
            body: await startImageImport(tx, request),
          }),
        )
        // Committed: queue the fetch (again on a replay; the job id makes it one job).
        if (result.status === 202) await queueImport(deps, result.body.upload_id)
        return idempotentAnswer(set, result)
      },
      {
        operation: 'importImages',
        params: idParam('property_id'),
        transform: pathIdsToNumbers,
        headers: IdempotencyKeyHeader,
        body: ImageImportRequest,
        response: { 202: ImageImportResponse },
        detail: {
          summary: 'Import photos by URL',
          description:
            'For migrations from another CRM: the service fetches each URL (30 s, at most 25 MiB, at most ' +
            '5 redirects, every hop checked) and then treats the bytes exactly like an uploaded file: ' +
            'the same checks and states, followed with `getImageUpload` on the returned `upload_id`. A URL ' +
            'whose host is or resolves to a loopback, private, link-local or otherwise non-public address ' +
            '(also after a redirect) fails its file with `error` `url_not_allowed`; other fetch failures ' +
            'are `timeout`, `too_large`, `too_many_redirects`, `connection_failed`, `bad_url` or ' +
            '`http_status_<n>`. `watermark: false` leaves the public copy unmarked (shown as `watermarked: false`).',
        },
      },
    )
    .get(
      '/properties/:property_id/images',
      async ({ auth, params }) => ({
        status: 'ok' as const,
        data: await listImages(deps, auth.business.id, params.property_id),
        authenticated_as: auth.business.name,
      }),
      {
        operation: 'listImages',
        params: idParam('property_id'),
        transform: pathIdsToNumbers,
        response: { 200: ImageListResponse },
        detail: {
          summary: 'List a property’s images',
          description:
            'Every image, processing, ready and failed, in display order: `order` 1..n over the images ' +
            'that are not failed (the cover first), failed ones last with `order` 0 and their `error`.',
        },
      },
    )
    .patch(
      '/properties/:property_id/images/:image_id',
      ({ auth, params, body }) => updateImage(deps, { businessId: auth.business.id, propertyId: params.property_id, imageId: params.image_id }, body),
      {
        operation: 'updateImage',
        params: ImageParams,
        transform: pathIdsToNumbers,
        body: ImageUpdateRequest,
        response: { 200: MediaIdResponse },
        detail: {
          summary: 'Change an image’s title or make it the cover',
          description:
            '`title` is shown in the public `images[]`. `is_primary: true` makes the image the cover: ' +
            'it moves to order 1 and the others shift down (a failed image cannot be the cover: 409); ' +
            '`is_primary: false` is a 422 (choose the new cover instead). Seen at once by `getProperty` and `listProperties`.',
        },
      },
    )
    .put('/properties/:property_id/images/order', ({ auth, params, body }) => reorderImages(deps, auth.business.id, params.property_id, body.image_ids), {
      operation: 'reorderImages',
      params: idParam('property_id'),
      transform: pathIdsToNumbers,
      body: ImageOrderRequest,
      response: { 200: CreatedResponse },
      detail: {
        summary: 'Reorder a property’s images',
        description:
          'Lists every image that is not failed exactly once, in the new order (422 naming duplicates, ' +
          'unknown or failed ids and the ones left out); the first becomes the cover. Answers the property id.',
      },
    })
    .delete(
      '/properties/:property_id/images/:image_id',
      ({ auth, params }) => deleteImage(deps, { businessId: auth.business.id, propertyId: params.property_id, imageId: params.image_id }),
      {
        operation: 'deleteImage',
        params: ImageParams,
        transform: pathIdsToNumbers,
        response: { 200: MediaIdResponse },
        detail: {
          summary: 'Delete an image',
          description:
            'The image leaves `images[]` at once and the next image in order becomes the cover; ' +
            'a worker deletes its public copy and original from storage (retried until done).',
        },
      },
    )
}
