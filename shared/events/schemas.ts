/**
 * Events (contract §10.1): every change an integrator can observe, recorded in the transaction
 * of the change. The event object is the same in GET /events and in webhook deliveries.
 */
import { Type as T, type Static } from '@sinclair/typebox'
import { literalUnion, Timestamp } from '../platform/schemas'

export const EVENT_TYPES = [
  'lead.created', 'lead.updated', 'lead.deleted', 'inquiry.created',
  'property.created', 'property.updated', 'property.published', 'property.unpublished', 'property.deleted',
  'image.ready', 'image.failed', 'video.ready', 'video.failed',
] as const
export type EventType = (typeof EVENT_TYPES)[number]

export const Event = T.Object(
  {
    id: T.String({ description: '`evt_` followed by an opaque string.', examples: ['evt_4kT9qLm2Xw8bZr1aPc0d'] }),
    type: literalUnion(EVENT_TYPES),
    created_at: Timestamp,
    sequence: T.Integer({ minimum: 1, description: 'Strictly increasing within the business, in commit order.' }),
    data: T.Object({
      object: T.Record(T.String(), T.Unknown(), { description: 'The resource as it is after the change (see the event type).' }),
      previous_attributes: T.Optional(T.Record(T.String(), T.Unknown(), { description: 'lead.updated: the previous values of the fields that changed.' })),
    }),
  },
  { title: 'Event' },
)
export type EventView = Static<typeof Event>
