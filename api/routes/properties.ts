/**
 * Properties (api-spec §4.2–4.5, contract §3): private drafts, explicit publication, and the
 * public catalogue read from `catalogue_entries`. Every write rebuilds the property's catalogue
 * row in its own transaction, so the next read sees it (contract §3.3).
 */
import { Elysia, ValidationError } from 'elysia'
import { Value } from '@sinclair/typebox/value'
import type { AppDeps } from '../deps'
import { authPlugin } from '../plugins/auth'
import { CreatedResponse, IdempotencyKeyHeader, idParam, pathIdsToNumbers } from '../../shared/platform/schemas'
import { idempotent } from '../../shared/platform/idempotency'
import type { Db } from '../../db/client'
import { findProperty, insertProperty, isOwnerContact, setPublished, updatePropertyColumns } from '../../db/queries/properties'
import { getCatalogueDocText, listCatalogue, rebuildCatalogueEntry } from '../../db/queries/catalogue'
import { catalogueQueryOf } from '../../shared/listings/catalogue-filters'
import { AppError, notFound, type FieldError } from '../../shared/platform/errors'
import { inputToColumns, mergePatch, propertyRuleErrors, rowToInput, type PropertyInputShape } from '../../shared/listings/property-input'
import {
  PropertyCreateRequest, PropertyListQuery, PropertyListResponse, PropertyMerged, PropertyResponse, PropertyUpdateRequest,
} from '../../shared/listings/schemas'

const PropertyNotFound = () => notFound('Property')
const NUMERIC_QUERY = ['limit', 'offset', 'min_price', 'max_price', 'min_bedrooms'] as const

/** Rules the schema cannot express, and the owner contact (contract §3.1); all problems in one 422. */
async function checkInput(tx: Db, businessId: number, input: PropertyInputShape): Promise<void> {
  const errors: FieldError[] = propertyRuleErrors(input)
  if (input.owner_id !== undefined && !(await isOwnerContact(tx, businessId, input.owner_id))) {
    errors.push({ loc: ['body', 'owner_id'], msg: 'Must be a contact of type "propietario" in this business', type: 'invalid' })
  }
  if (errors.length) {
    throw new AppError('validation', errors.length === 1 ? `${errors[0].loc.join('.')}: ${errors[0].msg}` : `${errors.length} invalid fields: ${errors.map((e) => e.loc.join('.')).join(', ')}`, { errors })
  }
}

const jsonResponse = (body: string) => new Response(body, { headers: { 'content-type': 'application/json' } })

export const propertyRoutes = (deps: AppDeps) => {
  const { db, sql } = deps.database
  return new Elysia({ name: 'routes.properties', prefix: '/v1', detail: { tags: ['Properties'] } })
    .use(authPlugin)
    .post(
      '/properties',
      async ({ auth, body, headers, set }) => {
        const result = await idempotent(db, { apiKeyId: auth.apiKeyId, operation: 'createProperty', key: headers['idempotency-key'], body }, async (tx) => {
          await checkInput(tx, auth.business.id, body)
          const id = await insertProperty(tx, auth.business.id, inputToColumns(body))
          // A new property is a draft: no catalogue row until it is published (api-spec §4.2).
          return { status: 201, body: { status: 'ok' as const, id } }
        })
        if (result.replayed) set.headers['idempotent-replayed'] = 'true'
        set.status = result.status
        return result.body
      },
      {
        operation: 'createProperty',
        headers: IdempotencyKeyHeader,
        body: PropertyCreateRequest,
        response: { 201: CreatedResponse },
        detail: {
          
          summary: 'Create a private (draft) property',
          description: 'The property is not public until `POST /properties/{property_id}/publish`. With `Idempotency-Key`, a retry within 24 h returns the original answer with `Idempotent-Replayed: true`.',
        },
      },
    )
    .get(
      '/properties',
      async ({ auth, query }) => {
        const { query: q, filters } = catalogueQueryOf(auth.business.id, query)
        const { count, dataText } = await listCatalogue(sql, q)
        // The page's docs arrive as JSON text from PostgreSQL and are spliced in as they are.
        return jsonResponse(
          `{"status":"ok","data":[${dataText}],"count":${count},"limit":${q.limit},"offset":${q.offset},"filters":${JSON.stringify(filters)},"authenticated_as":${JSON.stringify(auth.business.name)}}`,
        )
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
          description: 'Published properties of the business, filtered with AND, most recently updated first unless `sort` is given; ties break on id descending. `count` is the total across pages.',
        },
      },
    )
    .get(
      '/properties/:property_id',
      async ({ auth, params }) => {
        const doc = await getCatalogueDocText(sql, auth.business.id, params.property_id)
        if (doc === null) throw PropertyNotFound()
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
    .patch(
      '/properties/:property_id',
      async ({ auth, params, body }) => {
        await db.transaction(async (tx) => {
          const row = await findProperty(tx, auth.business.id, params.property_id, { forUpdate: true })
          if (!row) throw PropertyNotFound()
          const merged = mergePatch(rowToInput(row) as unknown as Record<string, unknown>, body as Record<string, unknown>)
          // contract §3.2: the merged record must pass the creation rules.
          if (!Value.Check(PropertyMerged, merged)) throw new ValidationError('body', PropertyMerged, merged)
          const input = merged as unknown as PropertyInputShape
          await checkInput(tx, auth.business.id, input)
          await updatePropertyColumns(tx, row.id, inputToColumns(input))
          if (row.publishedAt !== null) await rebuildCatalogueEntry(tx, row.id)
        })
        return { status: 'ok' as const, id: params.property_id }
      },
      {
        operation: 'updateProperty',
        params: idParam('property_id'),
        transform: pathIdsToNumbers,
        body: PropertyUpdateRequest,
        response: { 200: CreatedResponse },
        detail: {
          
          summary: 'Update a property',
          description: 'Supplied fields only; nested objects merge and `null` clears an optional field. The merged result must pass the creation rules. Works on drafts and published properties; images and private metadata are kept.',
        },
      },
    )
    .post(
      '/properties/:property_id/publish',
      async ({ auth, params }) => {
        await db.transaction(async (tx) => {
          const row = await findProperty(tx, auth.business.id, params.property_id, { forUpdate: true })
          if (!row) throw PropertyNotFound()
          await setPublished(tx, row.id, true)
          await rebuildCatalogueEntry(tx, row.id)
        })
        return { status: 'ok' as const, id: params.property_id }
      },
      {
        operation: 'publishProperty',
        params: idParam('property_id'),
        transform: pathIdsToNumbers,
        response: { 200: CreatedResponse },
        detail: { summary: 'Publish a property', description: 'Makes it visible in the public catalogue. Idempotent. No body.' },
      },
    )
    .post(
      '/properties/:property_id/unpublish',
      async ({ auth, params }) => {
        await db.transaction(async (tx) => {
          const row = await findProperty(tx, auth.business.id, params.property_id, { forUpdate: true })
          if (!row) throw PropertyNotFound()
          await setPublished(tx, row.id, false)
          await rebuildCatalogueEntry(tx, row.id)
        })
        return { status: 'ok' as const, id: params.property_id }
      },
      {
        operation: 'unpublishProperty',
        params: idParam('property_id'),
        transform: pathIdsToNumbers,
        response: { 200: CreatedResponse },
        detail: { summary: 'Unpublish a property', description: 'Removes it from the public catalogue; it stays as a private draft. Idempotent. No body.' },
      },
    )
}
