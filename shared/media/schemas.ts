/**
 * TypeBox models of the image upload endpoints (contract §5). The same schemas validate the
 * requests and write the OpenAPI document; bodies refuse unknown fields (contract §3.1).
 */
import { Type as T, type Static } from '@sinclair/typebox'
import { t } from 'elysia'
import { Nullable, Timestamp, idParam, literalUnion } from '../platform/schemas'

export const UPLOAD_CONTENT_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const
/** 25 MiB per file (contract §5). */
export const MAX_UPLOAD_BYTES = 26_214_400
export const MAX_FILES_PER_UPLOAD = 50

export const UploadParams = t.Object({
  property_id: idParam('property_id').properties.property_id,
  // No maxLength: contract §8 makes every id that is not an upload of this property a 404, and a
  // length keyword would answer 422; the server's limit on the request line and headers bounds it.
  upload_id: t.String({
    description: 'Upload session id returned by `createImageUpload` (a UUID). An unknown or malformed id, whatever its length, is a 404.',
  }),
})

const Uuid = (description: string) => T.String({ format: 'uuid', description })

export const ImageUploadFileInput = T.Object(
  {
    filename: T.String({ minLength: 1, maxLength: 255, description: 'Original file name (kept privately; never published).' }),
    content_type: literalUnion(UPLOAD_CONTENT_TYPES, { description: 'Content type the file will be PUT with. The real type is checked from the file itself.' }),
    size: T.Integer({ minimum: 1, maximum: MAX_UPLOAD_BYTES, description: 'Size in bytes; the upload may not be larger.' }),
  },
  { additionalProperties: false, title: 'ImageUploadFileInput' },
)

export const CreateImageUploadRequest = T.Object(
  {
    files: T.Array(ImageUploadFileInput, {
      minItems: 1,
      maxItems: MAX_FILES_PER_UPLOAD,
      description: 'Files in the order they should appear after the property’s existing images.',
    }),
  },
  {
    additionalProperties: false,
    title: 'CreateImageUploadRequest',
    examples: [{ files: [{ filename: 'salon.jpg', content_type: 'image/jpeg', size: 2457600 }] }],
  },
)

export const UploadTarget = T.Object(
  {
    file_id: Uuid('Id of this file within the upload.'),
    method: T.Literal('PUT'),
    url: T.String({ format: 'uri', description: 'Short-lived URL (≤ 15 minutes) that only writes this file into private storage.' }),
    headers: T.Object({ 'content-type': T.String() }, { description: 'Send exactly these headers with the PUT.', additionalProperties: false }),
  },
  { title: 'UploadTarget' },
)

export const CreateImageUploadResponse = T.Object(
  {
    status: T.Literal('ok'),
    upload_id: Uuid('Upload session id.'),
    expires_at: { ...Timestamp, description: 'When the upload URLs stop working; complete the upload before then.' },
    files: T.Array(UploadTarget, { description: 'One target per requested file, in request order.' }),
  },
  {
    title: 'CreateImageUploadResponse',
    examples: [
      {
        status: 'ok',
        upload_id: '0b6c2a52-3f0e-4a55-9a0e-7d6f1f0c9b11',
        expires_at: '2026-01-01T12:15:00.000Z',
        files: [
          { file_id: '5d3c4d2e-61c2-4b8e-9b0b-1f3e2a9c7d10', method: 'PUT', url: 'https://uploads.example.com/…', headers: { 'content-type': 'image/jpeg' } },
        ],
      },
    ],
  },
)

export const SESSION_STATES = ['pending', 'processing', 'completed', 'failed', 'expired'] as const
export const FILE_STATES = ['pending', 'processing', 'ready', 'failed'] as const

export const CompleteImageUploadResponse = T.Object(
  {
    status: T.Literal('ok'),
    upload_id: Uuid('Upload session id.'),
    state: literalUnion(['processing', 'completed', 'failed'] as const, {
      description: '`processing` once queued; a repeated call answers the current state.',
    }),
  },
  { title: 'CompleteImageUploadResponse', examples: [{ status: 'ok', upload_id: '0b6c2a52-3f0e-4a55-9a0e-7d6f1f0c9b11', state: 'processing' }] },
)

export const UploadFileStatus = T.Object(
  {
    file_id: Uuid('Id of the file within the upload.'),
    state: literalUnion(FILE_STATES, { description: '`ready`: the public copy is in the property’s `images[]`; `failed`: see `error`.' }),
    image_id: T.Optional(Uuid('When ready: the `id` of the image in the property’s `images[]`.')),
    error: T.Optional(
      T.String({
        description:
          'When failed: why (not uploaded, larger than declared, not a JPEG/PNG/WebP image, too ' +
          'many pixels, undecodable; or processing kept failing, kept for an operator to retry).',
      }),
    ),
  },
  { title: 'UploadFileStatus' },
)

export const ImageUploadStatusResponse = T.Object(
  {
    status: T.Literal('ok'),
    data: T.Object({
      upload_id: Uuid('Upload session id.'),
      state: literalUnion(SESSION_STATES, {
        description:
          '`completed` once every file is ready or failed and at least one is ready; `failed` when all failed; `expired` when never completed in time.',
      }),
      files: T.Array(UploadFileStatus),
    }),
    authenticated_as: T.String({ description: 'Name of the business owning the key.' }),
  },
  {
    title: 'ImageUploadStatusResponse',
    examples: [
      {
        status: 'ok',
        data: {
          upload_id: '0b6c2a52-3f0e-4a55-9a0e-7d6f1f0c9b11',
          state: 'completed',
          files: [
            { file_id: '5d3c4d2e-61c2-4b8e-9b0b-1f3e2a9c7d10', state: 'ready', image_id: '9a1f7f0e-2c1b-4d0a-8f55-0e4b8f1a2c33' },
            { file_id: '7e2a1c3b-0d4f-4e5a-8b6c-9d0e1f2a3b4c', state: 'failed', error: 'The file is not a JPEG, PNG or WebP image' },
          ],
        },
        authenticated_as: 'Inmobiliaria Sol',
      },
    ],
  },
)

export type CreateImageUpload = Static<typeof CreateImageUploadRequest>
export type CreatedImageUpload = Static<typeof CreateImageUploadResponse>
export type CompletedImageUpload = Static<typeof CompleteImageUploadResponse>
/** The `data` of `getImageUpload`. */
export type ImageUploadStatus = Static<typeof ImageUploadStatusResponse>['data']
export type UploadSessionState = ImageUploadStatus['state']

// ---- managing a listing's images (contract §9.1) ----

/** Titles of images and videos (contract §9.1, §9.3, §15): 0–200 characters. */
export const MAX_MEDIA_TITLE = 200
/** Images or videos one order request may list (a listing rarely has more than a hundred). */
export const MAX_MEDIA_ITEMS = 1000
/** URLs of imports and video links. */
export const MAX_MEDIA_URL = 2000

const MediaTitle = (description: string) => T.String({ maxLength: MAX_MEDIA_TITLE, description: `${description} 0–${MAX_MEDIA_TITLE} characters.` })
/** A path id that is a UUID: any other value, whatever its length, names nothing of this property (404), as upload ids (contract §8). */
const uuidPath = (description: string) => t.String({ description: `${description} An unknown or malformed id, whatever its length, is a 404.` })

export const ImageParams = t.Object({
  property_id: idParam('property_id').properties.property_id,
  image_id: uuidPath('Image id (the `id` in `images[]`, a UUID).'),
})

export const IMAGE_STATES = ['processing', 'ready', 'failed'] as const

export const Image = T.Object(
  {
    id: Uuid('Image id; the same `id` as in the public `images[]`.'),
    state: literalUnion(IMAGE_STATES, { description: '`processing` until its public copy is made; `failed`: see `error`.' }),
    url: Nullable(T.String({ format: 'uri', description: 'Public copy under CDN_URL once ready.' })),
    order: T.Integer({
      minimum: 0,
      description: 'Display order 1..n over the images that are not failed (the first is the cover); 0 for failed ones, listed last.',
    }),
    is_primary: T.Boolean({ description: 'The cover: always order 1.' }),
    title: T.String({ description: 'Shown in the public `images[]`; empty by default.' }),
    watermarked: T.Boolean({ description: 'Whether the public copy carries the business’s watermark (false for imports with `watermark: false`).' }),
    width: Nullable(T.Integer({ minimum: 1, description: 'Of the public copy, once ready.' })),
    height: Nullable(T.Integer({ minimum: 1, description: 'Of the public copy, once ready.' })),
    error: T.Optional(T.String({ description: 'When failed: why.' })),
  },
  {
    title: 'Image',
    examples: [
      {
        id: '9a1f7f0e-2c1b-4d0a-8f55-0e4b8f1a2c33',
        state: 'ready',
        url: 'https://cdn.example.com/images/4f0c1e8a9b2d4c6e8f0a1b2c3d4e5f60.jpg',
        order: 1,
        is_primary: true,
        title: 'Salón',
        watermarked: true,
        width: 1920,
        height: 1280,
      },
    ],
  },
)
export type ImageView = Static<typeof Image>

export const ImageListResponse = T.Object(
  {
    status: T.Literal('ok'),
    data: T.Array(Image, { description: 'In display order; failed images last.' }),
    authenticated_as: T.String({ description: 'Name of the business owning the key.' }),
  },
  { title: 'ImageListResponse' },
)

export const ImageUpdateRequest = T.Object(
  {
    title: T.Optional(MediaTitle('Shown with the image in the public `images[]`.')),
    is_primary: T.Optional(
      T.Literal(true, {
        description: '`true` makes this image the cover: it moves to order 1 and the others shift down. `false` is refused: choose the new cover instead.',
      }),
    ),
  },
  { additionalProperties: false, title: 'ImageUpdateRequest', examples: [{ title: 'Salón con vistas', is_primary: true }] },
)
export type ImageUpdate = Static<typeof ImageUpdateRequest>

export const ImageOrderRequest = T.Object(
  {
    image_ids: T.Array(T.String({ format: 'uuid', maxLength: 36, description: 'An image id.' }), {
      maxItems: MAX_MEDIA_ITEMS,
      description: `Every image of the property that is not failed, each once, in the new order; the first becomes the cover. At most ${MAX_MEDIA_ITEMS}.`,
    }),
  },
  {
    additionalProperties: false,
    title: 'ImageOrderRequest',
    examples: [{ image_ids: ['9a1f7f0e-2c1b-4d0a-8f55-0e4b8f1a2c33', '5d3c4d2e-61c2-4b8e-9b0b-1f3e2a9c7d10'] }],
  },
)

/** The answer of a change to one image or video: its id. */
export const MediaIdResponse = T.Object(
  { status: T.Literal('ok'), id: Uuid('Id of the image or video.') },
  { title: 'MediaIdResponse', examples: [{ status: 'ok', id: '9a1f7f0e-2c1b-4d0a-8f55-0e4b8f1a2c33' }] },
)

// ---- importing photos by URL (contract §9.2) ----

export const ImageImportItem = T.Object(
  {
    url: T.String({
      format: 'uri',
      pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
      maxLength: MAX_MEDIA_URL,
      description: `http(s) URL of the photo, fetched by the service (30 s, 25 MiB, 5 redirects). At most ${MAX_MEDIA_URL} characters.`,
    }),
    title: T.Optional(MediaTitle('Title of the image.')),
    watermark: T.Optional(
      T.Boolean({ default: true, description: '`false`: the public copy is left unmarked (migrated legacy photos); shown as `watermarked`.' }),
    ),
  },
  { additionalProperties: false, title: 'ImageImportItem' },
)

export const ImageImportRequest = T.Object(
  {
    images: T.Array(ImageImportItem, {
      minItems: 1,
      maxItems: MAX_FILES_PER_UPLOAD,
      description: 'Photos in the order they should appear after the property’s existing images.',
    }),
  },
  {
    additionalProperties: false,
    title: 'ImageImportRequest',
    examples: [
      {
        images: [
          { url: 'https://crm.example.com/photos/1234/salon.jpg', title: 'Salón' },
          { url: 'https://crm.example.com/photos/1234/fachada.jpg', watermark: false },
        ],
      },
    ],
  },
)
export type ImageImport = Static<typeof ImageImportRequest>

export const ImageImportResponse = T.Object(
  { status: T.Literal('ok'), upload_id: Uuid('Follow it with `getImageUpload`, as an upload.'), state: T.Literal('processing') },
  { title: 'ImageImportResponse', examples: [{ status: 'ok', upload_id: '0b6c2a52-3f0e-4a55-9a0e-7d6f1f0c9b11', state: 'processing' }] },
)

// ---- videos (contract §9.3) ----

export const VIDEO_CONTENT_TYPES = ['video/mp4', 'video/quicktime', 'video/webm'] as const
/** 2 GiB (contract §9.3). */
export const MAX_VIDEO_BYTES = 2_147_483_648
export const VIDEO_SOURCES = ['link', 'upload'] as const
export const VIDEO_STATES = ['pending', 'processing', 'ready', 'failed'] as const

export const VideoParams = t.Object({
  property_id: idParam('property_id').properties.property_id,
  video_id: uuidPath('Video id (a UUID).'),
})

export const VideoLinkRequest = T.Object(
  {
    url: T.String({
      format: 'uri',
      pattern: '^[Hh][Tt][Tt][Pp][Ss]://',
      maxLength: MAX_MEDIA_URL,
      description:
        'https URL of a YouTube video (`watch?v=`, `youtu.be/`, `shorts/`), a Vimeo video (`vimeo.com/<id>`) ' +
        'or a Matterport tour (`my.matterport.com/show/?m=<id>`). Never fetched; any other URL is a 422.',
    }),
    title: T.Optional(MediaTitle('Title of the video.')),
  },
  { additionalProperties: false, title: 'VideoLinkRequest', examples: [{ url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ', title: 'Recorrido' }] },
)
export type VideoLink = Static<typeof VideoLinkRequest>

export const VideoUploadRequest = T.Object(
  {
    filename: T.String({ minLength: 1, maxLength: 255, description: 'Original file name (kept privately; never published).' }),
    content_type: literalUnion(VIDEO_CONTENT_TYPES, { description: 'Content type the file will be PUT with.' }),
    size: T.Integer({ minimum: 1, maximum: MAX_VIDEO_BYTES, description: 'Size in bytes (at most 2 GiB); the upload may not be larger.' }),
    title: T.Optional(MediaTitle('Title of the video.')),
  },
  {
    additionalProperties: false,
    title: 'VideoUploadRequest',
    examples: [{ filename: 'recorrido.mp4', content_type: 'video/mp4', size: 48_000_000, title: 'Recorrido' }],
  },
)
export type VideoUpload = Static<typeof VideoUploadRequest>

export const VideoUploadResponse = T.Object(
  {
    status: T.Literal('ok'),
    video_id: Uuid('Id of the new video (`pending` until completed).'),
    upload: T.Object(
      {
        method: T.Literal('PUT'),
        url: T.String({ format: 'uri', description: 'Short-lived URL (≤ 15 minutes) that only writes this file into private storage.' }),
        headers: T.Object({ 'content-type': T.String() }, { description: 'Send exactly these headers with the PUT.', additionalProperties: false }),
        expires_at: { ...Timestamp, description: 'When the URL stops working; complete the upload before then.' },
      },
      { title: 'VideoUploadTarget' },
    ),
  },
  {
    title: 'VideoUploadResponse',
    examples: [
      {
        status: 'ok',
        video_id: '3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
        upload: { method: 'PUT', url: 'https://uploads.example.com/…', headers: { 'content-type': 'video/mp4' }, expires_at: '2026-01-01T12:15:00.000Z' },
      },
    ],
  },
)
export type CreatedVideoUpload = Static<typeof VideoUploadResponse>

export const VideoCompleteResponse = T.Object(
  {
    status: T.Literal('ok'),
    id: Uuid('Video id.'),
    state: literalUnion(['processing', 'ready', 'failed'] as const, { description: '`processing` once queued; a repeated call answers the current state.' }),
  },
  { title: 'VideoCompleteResponse', examples: [{ status: 'ok', id: '3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d', state: 'processing' }] },
)
export type CompletedVideoUpload = Static<typeof VideoCompleteResponse>

export const Video = T.Object(
  {
    id: Uuid('Video id; the same `id` as in the public `videos[]`.'),
    source: literalUnion(VIDEO_SOURCES, { description: '`link`: a YouTube, Vimeo or Matterport URL; `upload`: a file transcoded by the service.' }),
    state: literalUnion(VIDEO_STATES, { description: 'Links are `ready` at once; uploads go `pending` → `processing` → `ready` or `failed`.' }),
    title: T.String(),
    order: T.Integer({ minimum: 0, description: 'Display order 1..n over the videos that are not failed; 0 for failed ones, listed last.' }),
    url: T.Optional(T.String({ format: 'uri', description: 'Link: the provider’s page. Upload, once ready: the MP4 (H.264/AAC, long edge ≤ 1280 px).' })),
    hls_url: T.Optional(T.String({ format: 'uri', description: 'Upload, once ready: the HLS playlist (segments ≤ 6 s).' })),
    thumbnail_url: T.Optional(
      T.String({ format: 'uri', description: 'Upload, once ready: a JPEG poster. Link: the provider’s thumbnail where derivable (YouTube).' }),
    ),
    embed_url: T.Optional(T.String({ format: 'uri', description: 'Link: the provider’s embed URL (for an iframe).' })),
    duration_s: T.Optional(T.Number({ minimum: 0, description: 'Upload, once ready: length in seconds.' })),
    error: T.Optional(T.String({ description: 'When failed: why.' })),
  },
  {
    title: 'Video',
    examples: [
      {
        id: '3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
        source: 'link',
        state: 'ready',
        title: 'Recorrido',
        order: 1,
        url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
        embed_url: 'https://www.youtube.com/embed/dQw4w9WgXcQ',
        thumbnail_url: 'https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg',
      },
    ],
  },
)
export type VideoView = Static<typeof Video>

export const VideoListResponse = T.Object(
  {
    status: T.Literal('ok'),
    data: T.Array(Video, { description: 'In display order; failed videos last.' }),
    authenticated_as: T.String({ description: 'Name of the business owning the key.' }),
  },
  { title: 'VideoListResponse' },
)

export const VideoUpdateRequest = T.Object(
  { title: T.Optional(MediaTitle('Title of the video.')) },
  { additionalProperties: false, title: 'VideoUpdateRequest', examples: [{ title: 'Recorrido completo' }] },
)
export type VideoUpdate = Static<typeof VideoUpdateRequest>

export const VideoOrderRequest = T.Object(
  {
    video_ids: T.Array(T.String({ format: 'uuid', maxLength: 36, description: 'A video id.' }), {
      maxItems: MAX_MEDIA_ITEMS,
      description: `Every video of the property that is not failed, each once, in the new order. At most ${MAX_MEDIA_ITEMS}.`,
    }),
  },
  { additionalProperties: false, title: 'VideoOrderRequest', examples: [{ video_ids: ['3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d'] }] },
)
