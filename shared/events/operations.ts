/**
 * Reading events (contract §10.1: GET /events, GET /events/{id}, `cli events tail`) and keeping
 * them 30 days. Recording is record.ts, relaying to webhooks is shared/webhooks.
 */
import * as queries from '../../db/queries/events'
import type { EventRecord } from '../../db/queries/events'
import type { Scope } from '../access/scopes'
import { fieldError, notFound } from '../platform/errors'
import type { Services } from '../platform/services'
import { EVENT_ID_RE, EVENT_TYPE_PATTERNS, type EventListParams, type EventTypePattern, type EventView } from './schemas'
import { isPattern, visibleTypes } from './visibility'

/** Contract §10.1: events are kept 30 days. */
export const EVENT_RETENTION_DAYS = 30

export function eventView(e: EventRecord): EventView {
  return { id: e.id, type: e.type as EventView['type'], created_at: e.createdAt.toISOString(), sequence: e.sequence, data: e.data }
}

/** `types=lead.created,property.*`: each item a type, a family or `*`; anything else is a 422 naming the parameter. */
export function parseTypePatterns(raw: string | undefined): EventTypePattern[] | undefined {
  if (raw === undefined) return undefined
  const items = raw.split(',').map((s) => s.trim())
  const unknown = items.filter((s) => !isPattern(s))
  if (unknown.length) {
    throw fieldError(['query', 'types'], `Unknown event type ${JSON.stringify(unknown[0].slice(0, 100))}; known: ${EVENT_TYPE_PATTERNS.join(', ')}`, 'enum')
  }
  return [...new Set(items)] as EventTypePattern[]
}

/**
 * A page of events after `after` for the key's scopes, with the events as the JSON text of their
 * array (in EventView's shape), for the HTTP answer as it is.
 */
export async function listEventsJson(
  deps: Pick<Services, 'database'>,
  auth: { businessId: number; scopes: readonly Scope[] },
  params: EventListParams,
): Promise<{ eventsJson: string; hasMore: boolean; nextAfter: number }> {
  const types = visibleTypes(auth.scopes, parseTypePatterns(params.types))
  const after = params.after ?? 0
  const limit = params.limit ?? 100
  if (types.exact.length + types.prefixes.length === 0) return { eventsJson: '[]', hasMore: false, nextAfter: after }
  const page = await queries.listEventsJson(deps.database.db, { businessId: auth.businessId, after, limit, types })
  return { eventsJson: `[${page.events.join(',')}]`, hasMore: page.rows > limit, nextAfter: page.last ?? after }
}

/** 404 for an id of another business, of a type the key cannot read, or of any other shape (contract §15). */
export async function getEvent(deps: Pick<Services, 'database'>, auth: { businessId: number; scopes: readonly Scope[] }, eventId: string): Promise<EventView> {
  const types = visibleTypes(auth.scopes)
  const row =
    EVENT_ID_RE.test(eventId) && types.exact.length + types.prefixes.length ? await queries.findEvent(deps.database.db, auth.businessId, eventId, types) : null
  if (!row) throw notFound('Event')
  return eventView(row)
}

/** Every event of the business after `after`, every type (operators: `cli events tail`). */
export async function eventsAfter(deps: Pick<Services, 'database'>, businessId: number, after: number, limit: number): Promise<EventView[]> {
  const rows = await queries.listEvents(deps.database.db, { businessId, after, limit, types: { exact: [], prefixes: [''] } })
  return rows.slice(0, limit).map(eventView)
}

export const lastEventSequence = (deps: Pick<Services, 'database'>, businessId: number) => queries.lastSequence(deps.database.db, businessId)

/**
 * Maintenance: deletes events older than 30 days in batches (each its own statement, so the
 * sweep never holds a long transaction), with their webhook deliveries. Bounded per run.
 */
export async function sweepOldEvents(deps: Pick<Services, 'database'>, options: { batch?: number; maxPerRun?: number; days?: number } = {}): Promise<number> {
  const batch = options.batch ?? 5000
  const max = options.maxPerRun ?? 500_000
  let deleted = 0
  while (deleted < max) {
    const n = await queries.deleteEventsOlderThan(deps.database.db, options.days ?? EVENT_RETENTION_DAYS, batch)
    deleted += n
    if (n < batch) break
  }
  return deleted
}
