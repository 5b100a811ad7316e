/**
 * TypeBox models of the image upload endpoints (contract §5). The same schemas validate the
 * requests and write the OpenAPI document; bodies refuse unknown fields (contract §3.1).
 */
import { Type as T, type Static } from '@sinclair/typebox'
import { t } from 'elysia'
import { Timestamp, idParam, literalUnion } from '../platform/schemas'

export const UPLOAD_CONTENT_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const
/** 25 MiB per file (contract §5). */
export const MAX_UPLOAD_BYTES = 26_214_400
export const MAX_FILES_PER_UPLOAD = 50

export const UploadParams = t.Object({
  property_id: idParam('property_id').properties.property_id,
  // No maxLength: contract §8 makes every id that is not an upload of this property a 404, and a
  // length keyword would answer 422; the server's limit on the request line and headers bounds it.
  upload_id: t.String({ description: 'Upload session id returned by `createImageUpload` (a UUID). An unknown or malformed id, whatever its length, is a 404.' }),
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
  { files: T.Array(ImageUploadFileInput, { minItems: 1, maxItems: MAX_FILES_PER_UPLOAD, description: 'Files in the order they should appear after the property’s existing images.' }) },
  { additionalProperties: false, title: 'CreateImageUploadRequest', examples: [{ files: [{ filename: 'salon.jpg', content_type: 'image/jpeg', size: 2457600 }] }] },
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
    examples: [{
      status: 'ok',
      upload_id: '0b6c2a52-3f0e-4a55-9a0e-7d6f1f0c9b11',
      expires_at: '2026-01-01T12:15:00.000Z',
      files: [{ file_id: '5d3c4d2e-61c2-4b8e-9b0b-1f3e2a9c7d10', method: 'PUT', url: 'https://uploads.example.com/…', headers: { 'content-type': 'image/jpeg' } }],
    }],
  },
)

export const SESSION_STATES = ['pending', 'processing', 'completed', 'failed', 'expired'] as const
export const FILE_STATES = ['pending', 'processing', 'ready', 'failed'] as const

export const CompleteImageUploadResponse = T.Object(
  {
    status: T.Literal('ok'),
    upload_id: Uuid('Upload session id.'),
    state: literalUnion(['processing', 'completed', 'failed'] as const, { description: '`processing` once queued; a repeated call answers the current state.' }),
  },
  { title: 'CompleteImageUploadResponse', examples: [{ status: 'ok', upload_id: '0b6c2a52-3f0e-4a55-9a0e-7d6f1f0c9b11', state: 'processing' }] },
)

export const UploadFileStatus = T.Object(
  {
    file_id: Uuid('Id of the file within the upload.'),
    state: literalUnion(FILE_STATES, { description: '`ready`: the public copy is in the property’s `images[]`; `failed`: see `error`.' }),
    image_id: T.Optional(Uuid('When ready: the `id` of the image in the property’s `images[]`.')),
    error: T.Optional(T.String({ description: 'When failed: why (not uploaded, larger than declared, not a JPEG/PNG/WebP image, too many pixels, undecodable; or processing kept failing, kept for an operator to retry).' })),
  },
  { title: 'UploadFileStatus' },
)

export const ImageUploadStatusResponse = T.Object(
  {
    status: T.Literal('ok'),
    data: T.Object({
      upload_id: Uuid('Upload session id.'),
      state: literalUnion(SESSION_STATES, { description: '`completed` once every file is ready or failed and at least one is ready; `failed` when all failed; `expired` when never completed in time.' }),
      files: T.Array(UploadFileStatus),
    }),
    authenticated_as: T.String({ description: 'Name of the business owning the key.' }),
  },
  {
    title: 'ImageUploadStatusResponse',
    examples: [{
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
    }],
  },
)

export type CreateImageUpload = Static<typeof CreateImageUploadRequest>
export type CreatedImageUpload = Static<typeof CreateImageUploadResponse>
export type CompletedImageUpload = Static<typeof CompleteImageUploadResponse>
/** The `data` of `getImageUpload`. */
export type ImageUploadStatus = Static<typeof ImageUploadStatusResponse>['data']
export type UploadSessionState = ImageUploadStatus['state']
