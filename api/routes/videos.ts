/**
 * Videos (api-spec §2.1 `videos[]`, contract §9.3): links (YouTube, Vimeo, Matterport), recognised
 * without fetching them, and uploads transcoded by the `video-transcode` queue; listed, titled,
 * ordered and deleted like images. What each one does is in shared/media/videos.ts.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { idempotentAnswer } from '../idempotent-answer'
import { authPlugin } from '../plugins/auth'
import { CreatedResponse, IdempotencyKeyHeader, idParam, pathIdsToNumbers } from '../../shared/platform/schemas'
import { idempotent } from '../../shared/platform/idempotency'
import { addVideoLink, completeVideoUpload, deleteVideo, listPropertyVideos, reorderVideos, startVideoUpload, updateVideo } from '../../shared/media/videos'
import {
  MediaIdResponse,
  VideoCompleteResponse,
  VideoLinkRequest,
  VideoListResponse,
  VideoOrderRequest,
  VideoParams,
  VideoUpdateRequest,
  VideoUploadRequest,
  VideoUploadResponse,
} from '../../shared/media/schemas'

export const videoRoutes = (deps: AppDeps) => {
  const { db } = deps.database

  return new Elysia({ name: 'routes.videos', prefix: '/v1', detail: { tags: ['Videos'] } })
    .use(authPlugin)
    .post(
      '/properties/:property_id/videos',
      async ({ auth, params, body, headers, set }) => {
        const request = { businessId: auth.business.id, propertyId: params.property_id, body }
        const result = await idempotent(
          db,
          { apiKeyId: auth.apiKeyId, operation: 'createVideoLink', key: headers['idempotency-key'], body: { property_id: params.property_id, ...body } },
          async (tx) => ({
            status: 201,
            body: await addVideoLink(tx, request),
          }),
        )
        return idempotentAnswer(set, result)
      },
      {
        operation: 'createVideoLink',
        params: idParam('property_id'),
        transform: pathIdsToNumbers,
        headers: IdempotencyKeyHeader,
        body: VideoLinkRequest,
        response: { 201: MediaIdResponse },
        detail: {
          summary: 'Add a video link',
          description:
            'A YouTube (`watch?v=`, `youtu.be/`, `shorts/`), Vimeo (`vimeo.com/<id>`) or Matterport ' +
            '(`my.matterport.com/show/?m=<id>`) https URL, recognised without fetching it: ' +
            'ready at once, with the provider’s `embed_url` (and YouTube’s `thumbnail_url`). Any other URL is a 422 on `url`.',
        },
      },
    )
    .post(
      '/properties/:property_id/videos/uploads',
      async ({ auth, params, body, headers, set }) => {
        const request = { businessId: auth.business.id, propertyId: params.property_id, body }
        const result = await idempotent(
          db,
          { apiKeyId: auth.apiKeyId, operation: 'createVideoUpload', key: headers['idempotency-key'], body: { property_id: params.property_id, ...body } },
          async (tx) => ({
            status: 201,
            body: await startVideoUpload(deps, tx, request),
          }),
        )
        return idempotentAnswer(set, result)
      },
      {
        operation: 'createVideoUpload',
        params: idParam('property_id'),
        transform: pathIdsToNumbers,
        headers: IdempotencyKeyHeader,
        body: VideoUploadRequest,
        response: { 201: VideoUploadResponse },
        detail: {
          summary: 'Prepare a video upload',
          description:
            'Creates a `pending` video and returns one short-lived (≤ 15 min) `PUT` URL into private ' +
            'storage: send the file with exactly the returned `headers`, then call `completeVideoUpload`. ' +
            'MP4, QuickTime or WebM, at most 2 GiB.',
        },
      },
    )
    .post(
      '/properties/:property_id/videos/:video_id/complete',
      async ({ auth, params, set }) => {
        const answer = await completeVideoUpload(deps, { businessId: auth.business.id, propertyId: params.property_id, videoId: params.video_id })
        set.status = 202
        return answer
      },
      {
        operation: 'completeVideoUpload',
        params: VideoParams,
        transform: pathIdsToNumbers,
        response: { 202: VideoCompleteResponse },
        detail: {
          summary: 'Complete a video upload',
          description:
            'Queues the transcode and answers 202 at once: the file is probed (a real video stream, ' +
            'at most 15 minutes, at most 4K), then an HLS rendition (`hls_url`), an MP4 (`url`) ' +
            'and a JPEG poster (`thumbnail_url`) are made (H.264/AAC, long edge ≤ 1280 px, ' +
            'no metadata). A file that is not a usable video ends `failed` with an `error`. ' +
            'Repeating the call is harmless and answers the current state; a link is a 409; an upload not completed before its URL expired fails.',
        },
      },
    )
    .get(
      '/properties/:property_id/videos',
      async ({ auth, params }) => ({
        status: 'ok' as const,
        data: await listPropertyVideos(deps, auth.business.id, params.property_id),
        authenticated_as: auth.business.name,
      }),
      {
        operation: 'listVideos',
        params: idParam('property_id'),
        transform: pathIdsToNumbers,
        response: { 200: VideoListResponse },
        detail: {
          summary: 'List a property’s videos',
          description:
            'Links and uploads in display order (`order` 1..n over the videos that are not failed; failed ' +
            'ones last with `order` 0 and their `error`). The public `videos[]` lists the ready ones.',
        },
      },
    )
    .patch(
      '/properties/:property_id/videos/:video_id',
      ({ auth, params, body }) => updateVideo(deps, { businessId: auth.business.id, propertyId: params.property_id, videoId: params.video_id }, body),
      {
        operation: 'updateVideo',
        params: VideoParams,
        transform: pathIdsToNumbers,
        body: VideoUpdateRequest,
        response: { 200: MediaIdResponse },
        detail: { summary: 'Change a video’s title', description: 'Shown in the public `videos[]` at once.' },
      },
    )
    .put('/properties/:property_id/videos/order', ({ auth, params, body }) => reorderVideos(deps, auth.business.id, params.property_id, body.video_ids), {
      operation: 'reorderVideos',
      params: idParam('property_id'),
      transform: pathIdsToNumbers,
      body: VideoOrderRequest,
      response: { 200: CreatedResponse },
      detail: {
        summary: 'Reorder a property’s videos',
        description:
          'Lists every video that is not failed exactly once, in the new order (422 naming ' +
          'duplicates, unknown or failed ids and the ones left out). Answers the property id.',
      },
    })
    .delete(
      '/properties/:property_id/videos/:video_id',
      ({ auth, params }) => deleteVideo(deps, { businessId: auth.business.id, propertyId: params.property_id, videoId: params.video_id }),
      {
        operation: 'deleteVideo',
        params: VideoParams,
        transform: pathIdsToNumbers,
        response: { 200: MediaIdResponse },
        detail: {
          summary: 'Delete a video',
          description:
            'The video leaves `videos[]` at once; a worker deletes its rendition and original ' +
            'from storage (retried until done). A transcode still running for it is discarded.',
        },
      },
    )
}
