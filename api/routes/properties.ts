/**
 * Properties (api-spec §4.2–4.5, contract §3): private drafts, explicit publication, and the
 * public catalogue read from `catalogue_entries`. What each one does is in
 * shared/listings/operations.ts; the routes own their paths, schemas and OpenAPI text.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { idempotentAnswer } from '../idempotent-answer'
import { authPlugin } from '../plugins/auth'
import { idempotent } from '../../shared/platform/idempotency'
import { CreatedResponse, IdempotencyKeyHeader, idParam, pathIdsToNumbers } from '../../shared/platform/schemas'
import {
  createProperty,
  deleteProperty,
  getPrivateProperty,
  getPublicPropertyText,
  listCatalogue,
  publishProperty,
  unpublishProperty,
  updateProperty,
} from '../../shared/listings/operations'
import {
  PrivatePropertyResponse,
  PropertyCreateRequest,
  PropertyListQuery,
  PropertyListResponse,
  PropertyResponse,
  PropertyUpdateRequest,
} from '../../shared/listings/schemas'

const NUMERIC_QUERY = ['limit', 'offset', 'min_price', 'max_price', 'min_bedrooms'] as const

const jsonResponse = (body: string | Blob) => new Response(body, { headers: { 'content-type': 'application/json' } })

const LIST_HEAD = new TextEncoder().encode('{"status":"ok","data":[')

export const propertyRoutes = (deps: AppDeps) => {
  return new Elysia({ name: 'routes.properties', prefix: '/v1', detail: { tags: ['Properties'] } })
    .use(authPlugin)
    .post(
      '/properties',
      async ({ auth, body, headers, set }) => {
        const result = await idempotent(
          deps.database.db,
          { apiKeyId: auth.apiKeyId, operation: 'createProperty', key: headers['idempotency-key'], body },
          async (tx) => {
            const id = await createProperty(tx, auth.business.id, body)
            return { status: 201, body: { status: 'ok' as const, id } }
          },
        )
        return idempotentAnswer(set, result)
      },
      {
        operation: 'createProperty',
        headers: IdempotencyKeyHeader,
        body: PropertyCreateRequest,
        response: { 201: CreatedResponse },
        detail: {
          summary: 'Create a private (draft) property',
          description:
            'The property is not public until `POST /properties/{property_id}/publish`. With `Idempotency-Key`, ' +
            'a retry within 24 h returns the original answer with `Idempotent-Replayed: true`.',
        },
      },
    )
    .get(
      '/properties',
      async ({ auth, query }) => {
        const page = await listCatalogue(deps, auth.business.id, query)
        // The page's docs arrive as JSON bytes from PostgreSQL and are spliced in as they are.
        const tail =
          `],"count":${page.count},"count_relation":"${page.countRelation}","limit":${page.limit},"offset":${page.offset},` +
          `"filters":${JSON.stringify(page.filters)},"authenticated_as":${JSON.stringify(auth.business.name)}}`
        return jsonResponse(new Blob([LIST_HEAD, page.data, tail]))
      },
      {
        operation: 'listProperties',
        // Numbers are converted before validation: Elysia's own string→number step reports a
        // bound violation without the parameter's name, and contract §6 wants `loc` to name it.
        transform({ query }) {
          const raw = query as Record<string, unknown>
          for (const name of NUMERIC_QUERY) {
            const v = raw[name]
            if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) raw[name] = Number(v)
          }
        },
        query: PropertyListQuery,
        response: { 200: PropertyListResponse },
        detail: {
          summary: 'List the public catalogue',
          description:
            'Published properties of the business, filtered with AND, most recently updated first unless `sort` is given; ties break on id descending. ' +
            'With `q` and no `sort`, the 1,000 most recently updated matches by relevance, ties by ' +
            '`updated_at` then id, descending; with `q` and `sort`, the first 1,000 matches in that order. ' +
            '`count` is the total across pages; with `q` it is exact up to 1,000, then 1,000 with `count_relation: ' +
            '"gte"`, and `offset + limit` may not pass 1,000 (422 on `offset`). Every answer carries `count_relation`.',
        },
      },
    )
    .get(
      '/properties/:property_id',
      async ({ auth, params }) => {
        const doc = await getPublicPropertyText(deps, auth.business.id, params.property_id)
        return jsonResponse(`{"status":"ok","data":${doc},"authenticated_as":${JSON.stringify(auth.business.name)}}`)
      },
      {
        operation: 'getProperty',
        params: idParam('property_id'),
        transform: pathIdsToNumbers,
        response: { 200: PropertyResponse },
        detail: { summary: 'Retrieve a published property', description: '404 `Property not found` for a missing, draft, unpublished or foreign id alike.' },
      },
    )
    .patch('/properties/:property_id', ({ auth, params, body }) => updateProperty(deps, auth.business.id, params.property_id, body), {
      operation: 'updateProperty',
      params: idParam('property_id'),
      transform: pathIdsToNumbers,
      body: PropertyUpdateRequest,
      response: { 200: CreatedResponse },
      detail: {
        summary: 'Update a property',
        description:
          'Supplied fields only. Objects merge at every depth; arrays (`operations`, `features`, `activities.*`) are replaced whole; `null` clears ' +
          'an optional field at any depth (`is_featured` and `status` go back to their defaults). The merged result must pass the creation rules; ' +
          '`owner_id` is checked only when the request sets it. Works on drafts and published properties; images and private metadata are kept.',
      },
    })
    .post('/properties/:property_id/publish', ({ auth, params }) => publishProperty(deps, auth.business.id, params.property_id), {
      operation: 'publishProperty',
      params: idParam('property_id'),
      transform: pathIdsToNumbers,
      response: { 200: CreatedResponse },
      detail: { summary: 'Publish a property', description: 'Makes it visible in the public catalogue. Idempotent. No body.' },
    })
    .post('/properties/:property_id/unpublish', ({ auth, params }) => unpublishProperty(deps, auth.business.id, params.property_id), {
      operation: 'unpublishProperty',
      params: idParam('property_id'),
      transform: pathIdsToNumbers,
      response: { 200: CreatedResponse },
      detail: { summary: 'Unpublish a property', description: 'Removes it from the public catalogue; it stays as a private draft. Idempotent. No body.' },
    })
    .get(
      '/properties/:property_id/private',
      async ({ auth, params }) => ({
        status: 'ok' as const,
        data: await getPrivateProperty(deps, auth.business.id, params.property_id),
        authenticated_as: auth.business.name,
      }),
      {
        operation: 'getPrivateProperty',
        params: idParam('property_id'),
        transform: pathIdsToNumbers,
        response: { 200: PrivatePropertyResponse },
        detail: {
          summary: 'Read back a property as written',
          description:
            'Drafts and published properties alike: every field of the creation body as stored ' +
            '(exact coordinates and `visibility` included; `subtype` and `owner_id` null when unset), ' +
            'plus `status`, `published`, every image and video (as `listImages` and `listVideos`), ' +
            '`created_at` and `updated_at`. A PATCH followed by this read returns what was sent, merged.',
        },
      },
    )
    .delete('/properties/:property_id', ({ auth, params }) => deleteProperty(deps, auth.business.id, params.property_id), {
      operation: 'deleteProperty',
      params: idParam('property_id'),
      transform: pathIdsToNumbers,
      response: { 200: CreatedResponse },
      detail: {
        summary: 'Delete a property',
        description:
          'Removes the listing at once from every read (404 afterwards: its private and ' +
          'public reads, the catalogue and the feed), with its images, videos and uploads; ' +
          'a worker deletes its originals and public copies from storage (retried until done). ' +
          'Records `property.deleted`. Inquiries about it keep their text with `property_id` null.',
      },
    })
}
