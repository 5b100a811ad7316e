/**
 * Events (contract §10.1): every change an integrator can observe, recorded in the transaction
 * of the change. The event object is the same in GET /events and in webhook deliveries.
 */
import { Type as T, type Static } from '@sinclair/typebox'
import { t } from 'elysia'
import { literalUnion, Timestamp } from '../platform/schemas'

export const EVENT_TYPES = [
  'lead.created',
  'lead.updated',
  'lead.deleted',
  'inquiry.created',
  'property.created',
  'property.updated',
  'property.published',
  'property.unpublished',
  'property.deleted',
  'image.ready',
  'image.failed',
  'video.ready',
  'video.failed',
] as const
export type EventType = (typeof EVENT_TYPES)[number]

/** The resource families of the event types: `lead.*` names every `lead.` type. */
export const EVENT_FAMILIES = ['lead', 'inquiry', 'property', 'image', 'video'] as const
export type EventFamily = (typeof EVENT_FAMILIES)[number]

/** What a type filter or a webhook subscription may name: a type, a family (`lead.*`), or `*` (every type). */
export const EVENT_TYPE_PATTERNS = [...EVENT_TYPES, ...EVENT_FAMILIES.map((f) => `${f}.*` as const), '*'] as const
export type EventTypePattern = (typeof EVENT_TYPE_PATTERNS)[number]

export const Event = T.Object(
  {
    id: T.String({ description: '`evt_` followed by an opaque string.', examples: ['evt_19ac1f3e2b84kT9qLm2Xw8bZr1'] }),
    type: literalUnion(EVENT_TYPES),
    created_at: Timestamp,
    sequence: T.Integer({ minimum: 1, description: 'Strictly increasing within the business, in commit order.' }),
    data: T.Object({
      object: T.Record(T.String(), T.Unknown(), { description: 'The resource as it is after the change (see the event type).' }),
      previous_attributes: T.Optional(T.Record(T.String(), T.Unknown(), { description: 'lead.updated: the previous values of the fields that changed.' })),
    }),
  },
  {
    title: 'Event',
    examples: [
      {
        id: 'evt_19ac1f3e2b84kT9qLm2Xw8bZr1',
        type: 'property.unpublished',
        created_at: '2026-11-20T10:15:00.000Z',
        sequence: 42,
        data: { object: { id: 7 } },
      },
    ],
  },
)
export type EventView = Static<typeof Event>

const TYPES_ABOUT =
  `Comma-separated event types or families: ${EVENT_TYPE_PATTERNS.map((p) => `\`${p}\``).join(', ')}. ` +
  `Types the key cannot read (see the operation) are never returned.`

export const EventListQuery = t.Object({
  types: t.Optional(t.String({ minLength: 1, maxLength: 1000, description: TYPES_ABOUT, examples: ['lead.created,property.*'] })),
  after: t.Optional(
    t.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Only events with a greater `sequence` (default 0: from the oldest kept).' }),
  ),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, default: 100, description: '1–1000, default 100.' })),
})
export type EventListParams = Static<typeof EventListQuery>

export const EventListResponse = T.Object(
  {
    status: T.Literal('ok'),
    data: T.Array(Event, { description: 'Ascending by `sequence`.' }),
    has_more: T.Boolean(),
    next_after: T.Integer({
      minimum: 0,
      description: 'Pass as `after` for the next page: the last `sequence` of this page (or the `after` sent, when the page is empty).',
    }),
    authenticated_as: T.String(),
  },
  { title: 'EventListResponse' },
)

export const EventDetailResponse = T.Object({ status: T.Literal('ok'), data: Event, authenticated_as: T.String() }, { title: 'EventDetailResponse' })

/** Event ids as new_event_id() mints them (and the older 9-character time prefix); anything else names no event (a 404, contract §15). */
export const EVENT_ID_RE = /^evt_[A-Za-z0-9]{1,64}$/

/**
 * No maximum or pattern keyword, as `upload_id`: a keyword promises a 422, and an id of any shape
 * is a 404 (contract §15); the routes answer it before validation. The request-head limit
 * (docs/limits.md) bounds it. minLength 1 only says what a path can hold: with an empty id the
 * path is another route's (`/events/` lists).
 */
export const EventIdParam = t.Object({
  event_id: t.String({
    minLength: 1,
    description: 'An event id: `evt_` and 1–64 letters or digits. A value of any other length or characters names no event: 404, never 422.',
    examples: ['evt_19ac1f3e2b84kT9qLm2Xw8bZr1'],
  }),
})

/** A path's event_id that cannot name an event (malformed percent-encoding leaves none): 404 before validation. */
export const isEventId = (value: unknown): value is string => typeof value === 'string' && EVENT_ID_RE.test(value)
