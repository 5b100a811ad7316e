/**
 * Events (contract §10.1, §15): the outbox read by integrators, and redelivery to a webhook
 * endpoint (§10.2). What each does is in shared/events/operations.ts and shared/webhooks.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { authPlugin, requireOperationScope } from '../plugins/auth'
import { getEvent, listEventsJson } from '../../shared/events/operations'
import { EventDetailResponse, EventIdParam, EventListQuery, EventListResponse, isEventId } from '../../shared/events/schemas'
import { notFound } from '../../shared/platform/errors'
import { redeliverEvent } from '../../shared/webhooks/operations'
import { RedeliverRequest, RedeliverResponse } from '../../shared/webhooks/schemas'

const NUMERIC_QUERY = ['after', 'limit'] as const

/**
 * contract §15 §10.1: an id that names no visible event is a 404 whatever its shape, so one that
 * cannot be an event id (any length, any characters, a percent-encoding that decodes to nothing)
 * is answered before validation would call it a 422; a missing scope still answers 403 first.
 */
const eventIdOr404 =
  (operation: 'getEvent' | 'redeliverEvent') =>
  ({ params, request }: { params: Record<string, unknown>; request: Request }) => {
    requireOperationScope(request, operation)
    if (!isEventId(params.event_id)) throw notFound('Event')
  }

const VISIBILITY =
  'A key sees the events of what its scopes can read: `lead.*` and `inquiry.*` ' +
  'need `leads:read`; `property.*`, `image.*` and `video.*` need `properties:read`, ' +
  'and the types that carry private fields of listings (drafts, exact addresses) — ' +
  '`property.created`, `property.updated`, `image.*`, `video.*` — need `properties:write` as well. ' +
  'A `properties:read` key without `properties:write` sees `property.published`, `property.unpublished` ' +
  'and `property.deleted` only. Other events are simply absent. Events are kept 30 days.'

export const eventRoutes = (deps: AppDeps) =>
  new Elysia({ name: 'routes.events', prefix: '/v1', detail: { tags: ['Events'] } })
    .use(authPlugin)
    .get(
      '/events',
      async ({ auth, query }) => {
        const page = await listEventsJson(deps, { businessId: auth.business.id, scopes: auth.scopes }, query)
        // The events array comes written by PostgreSQL in the schema's shape and is sent as it
        // is: the page is up to 1,000 events, and parsing, checking and writing each again cost
        // more than the query (`bun run bench events`, GET /events at c=16).
        return new Response(
          `{"status":"ok","data":${page.eventsJson},"has_more":${page.hasMore},"next_after":${page.nextAfter},` +
            `"authenticated_as":${JSON.stringify(auth.business.name)}}`,
          { headers: { 'content-type': 'application/json' } },
        )
      },
      {
        operation: 'listEvents',
        // As the other lists: numbers converted before validation, so a violation names the parameter.
        transform({ query }) {
          const raw = query as Record<string, unknown>
          for (const name of NUMERIC_QUERY) {
            const v = raw[name]
            if (typeof v === 'string' && /^\d{1,16}$/.test(v)) raw[name] = Number(v)
          }
        },
        query: EventListQuery,
        response: { 200: EventListResponse },
        detail: {
          summary: 'List events',
          description:
            `Events after \`after\`, ascending by \`sequence\` (strictly increasing within the business, in commit order), at ` +
            `most \`limit\`. Keep \`next_after\` and pass it as \`after\` to continue; \`has_more\` says whether another page ` +
            `is ready now. \`types\` narrows the list (\`lead.created,property.*\`); an unknown type is a 422. ${VISIBILITY}`,
        },
      },
    )
    .get(
      '/events/:event_id',
      async ({ auth, params }) => ({
        status: 'ok' as const,
        data: await getEvent(deps, { businessId: auth.business.id, scopes: auth.scopes }, params.event_id),
        authenticated_as: auth.business.name,
      }),
      {
        operation: 'getEvent',
        transform: eventIdOr404('getEvent'),
        params: EventIdParam,
        response: { 200: EventDetailResponse },
        detail: { summary: 'Retrieve an event', description: `404 for an id that names no event visible to the key, whatever its shape. ${VISIBILITY}` },
      },
    )
    .post(
      '/events/:event_id/redeliver',
      async ({ auth, params, body, set }) => {
        const { deliveryId } = await redeliverEvent(deps, { businessId: auth.business.id, scopes: auth.scopes }, params.event_id, body.endpoint_id)
        set.status = 202
        return { status: 'ok' as const, event_id: params.event_id, endpoint_id: body.endpoint_id, delivery_id: deliveryId }
      },
      {
        operation: 'redeliverEvent',
        transform: eventIdOr404('redeliverEvent'),
        params: EventIdParam,
        body: RedeliverRequest,
        response: { 202: RedeliverResponse },
        detail: {
          summary: 'Deliver an event to a webhook endpoint again',
          description:
            "Queues a further attempt of the event's delivery to the endpoint (attempt numbers continue; a " +
            "delivery is created if the endpoint never had one), whatever the delivery's state. 404 for an " +
            'event the key cannot see or an endpoint of another business; 409 when the endpoint is disabled.',
        },
      },
    )
