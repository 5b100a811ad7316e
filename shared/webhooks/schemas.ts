/**
 * TypeBox models of the webhook endpoints (contract §10.2, §15). The same schemas validate
 * requests, write the OpenAPI document and give the types.
 */
import { Type as T, type Static } from '@sinclair/typebox'
import { t } from 'elysia'
import { MAX_ID, Nullable, Timestamp, literalUnion } from '../platform/schemas'
import { EVENT_TYPE_PATTERNS } from '../events/schemas'

const strict = { additionalProperties: false }

/** At most this many endpoints per business (as Stripe): what one business can hold of the delivery workers. */
export const MAX_ENDPOINTS_PER_BUSINESS = 16
export const ENDPOINT_STATUSES = ['enabled', 'disabled'] as const

const EndpointUrl = T.String({
  format: 'uri',
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
  minLength: 8,
  maxLength: 2000,
  description:
    'http(s) URL that receives the deliveries. Loopback, private and other non-public addresses are refused (422 ' +
    'on `url`); the host name is resolved when the endpoint is created or changed, and again at every delivery.',
})
const EnabledEvents = T.Array(literalUnion(EVENT_TYPE_PATTERNS, { title: 'EventTypePattern' }), {
  minItems: 1,
  maxItems: 32,
  uniqueItems: true,
  description:
    'Event types (`lead.created`), families (`property.*`) or `*`. An exact type must be one the key can ' +
    'read (`lead.*`, `inquiry.*`: `leads:read`; `property.*`, `image.*`, `video.*`: `properties:read`, ' +
    'and `property.created`, `property.updated`, `image.*`, `video.*` also `properties:write`), ' +
    'else 422; a wildcard needs the read scope of each family it covers, else 422. ' +
    'The endpoint is sent only the types the key that set the subscription can read, whatever a wildcard matches: `property.*` ' +
    'chosen by a `properties:read` key delivers `property.published`, `property.unpublished` and `property.deleted`. ' +
    'A PATCH of `url` by a key that reads less narrows it to what that key reads.',
})
const Description = T.String({ maxLength: 500 })

export const WebhookEndpointCreateRequest = T.Object(
  { url: EndpointUrl, enabled_events: EnabledEvents, description: T.Optional(Nullable(Description)) },
  {
    ...strict,
    title: 'WebhookEndpointCreateRequest',
    examples: [{ url: 'https://crm.example.com/webhooks/property-lead', enabled_events: ['lead.created', 'property.*'], description: 'CRM sync' }],
  },
)
export type WebhookEndpointCreate = Static<typeof WebhookEndpointCreateRequest>

export const WebhookEndpointUpdateRequest = T.Object(
  {
    url: T.Optional(EndpointUrl),
    enabled_events: T.Optional(EnabledEvents),
    description: T.Optional(Nullable(Description)),
    status: T.Optional(
      literalUnion(ENDPOINT_STATUSES, {
        description: '`disabled` stops deliveries (pending ones are cancelled); `enabled` resumes them for new events and clears `disabled_reason`.',
      }),
    ),
  },
  { ...strict, title: 'WebhookEndpointUpdateRequest', examples: [{ enabled_events: ['*'] }, { status: 'enabled' }] },
)
export type WebhookEndpointUpdate = Static<typeof WebhookEndpointUpdateRequest>

export const WebhookEndpoint = T.Object(
  {
    id: T.Integer({ minimum: 1 }),
    url: T.String(),
    description: Nullable(T.String()),
    enabled_events: T.Array(T.String()),
    status: literalUnion(ENDPOINT_STATUSES),
    disabled_reason: Nullable(T.String({ description: 'Why the endpoint was disabled (410 Gone, failing continuously, or by a PATCH); null while enabled.' })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    title: 'WebhookEndpoint',
    examples: [
      {
        id: 3,
        url: 'https://crm.example.com/webhooks/property-lead',
        description: 'CRM sync',
        enabled_events: ['lead.created', 'property.*'],
        status: 'enabled',
        disabled_reason: null,
        created_at: '2026-11-20T10:00:00.000Z',
        updated_at: '2026-11-20T10:00:00.000Z',
      },
    ],
  },
)
export type WebhookEndpointView = Static<typeof WebhookEndpoint>

const Secret = T.String({
  description: '`whsec_` + base64 of 32 random bytes: the Standard Webhooks signing secret. Shown only in this answer.',
  examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw9V3N8TWxCtM='],
})

export const WebhookEndpointCreatedResponse = T.Object(
  { status: T.Literal('ok'), data: T.Intersect([WebhookEndpoint, T.Object({ secret: Secret })], { title: 'WebhookEndpointWithSecret' }) },
  { title: 'WebhookEndpointCreatedResponse' },
)
export const WebhookEndpointResponse = T.Object(
  { status: T.Literal('ok'), data: WebhookEndpoint, authenticated_as: T.String() },
  { title: 'WebhookEndpointResponse' },
)
export const WebhookEndpointUpdatedResponse = T.Object({ status: T.Literal('ok'), data: WebhookEndpoint }, { title: 'WebhookEndpointUpdatedResponse' })
export const WebhookEndpointListResponse = T.Object(
  { status: T.Literal('ok'), data: T.Array(WebhookEndpoint), authenticated_as: T.String() },
  { title: 'WebhookEndpointListResponse' },
)
export const RotatedSecretResponse = T.Object(
  {
    status: T.Literal('ok'),
    secret: Secret,
    previous_secret_expires_at: Timestamp,
  },
  { title: 'RotatedSecretResponse', description: 'Until `previous_secret_expires_at` (24 h) every delivery carries two signatures, one per secret.' },
)

export const WebhookAttempt = T.Object(
  {
    id: T.Integer({ minimum: 1 }),
    delivery_id: T.String(),
    event_id: T.String(),
    event_type: T.String(),
    attempt: T.Integer({ minimum: 1, description: 'Attempt number of this delivery (a redelivery continues the count).' }),
    status_code: Nullable(T.Integer({ description: 'The HTTP status answered; null when no answer came.' })),
    error: Nullable(T.String({ description: 'Why the attempt failed (timeout, refused address, non-2xx status…); null on success.' })),
    latency_ms: T.Integer({ minimum: 0 }),
    delivered_at: Timestamp,
  },
  { title: 'WebhookAttempt', description: 'One attempt to deliver an event to the endpoint; `delivered_at` is when it was made.' },
)
export type WebhookAttemptView = Static<typeof WebhookAttempt>
export const WebhookAttemptListResponse = T.Object(
  { status: T.Literal('ok'), data: T.Array(WebhookAttempt, { description: 'Newest first.' }), authenticated_as: T.String() },
  { title: 'WebhookAttemptListResponse' },
)
export const WebhookAttemptListQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, default: 50, description: '1–1000, default 50.' })),
})

export const RedeliverRequest = T.Object(
  { endpoint_id: T.Integer({ minimum: 1, maximum: MAX_ID, description: 'A webhook endpoint of the business.' }) },
  { ...strict, title: 'RedeliverRequest', examples: [{ endpoint_id: 3 }] },
)
export const RedeliverResponse = T.Object(
  { status: T.Literal('ok'), event_id: T.String(), endpoint_id: T.Integer(), delivery_id: T.String() },
  {
    title: 'RedeliverResponse',
    examples: [{ status: 'ok', event_id: 'evt_19ac1f3e2b84kT9qLm2Xw8bZr1', endpoint_id: 3, delivery_id: '0c8e9d2a-7f4b-4c1e-9a55-3f2b6d1e8a90' }],
  },
)
