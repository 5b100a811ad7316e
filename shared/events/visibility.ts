/**
 * Which events a key sees (contract §10.1, revised in §15): `lead.*` and `inquiry.*` need
 * `leads:read`; `property.*`, `image.*` and `video.*` need `properties:read`, and the types that
 * carry private fields (drafts, exact addresses: `property.created`, `property.updated`,
 * `image.*`, `video.*`) need `properties:write` as well, the scope of the private read. So a
 * `properties:read` key (what a portal partner gets) sees `property.published`,
 * `property.unpublished` and `property.deleted` only. Other events are simply absent — from
 * lists, from GET /events/{id} (a 404, §15), and from what a webhook endpoint is sent.
 */
import type { TypeFilter } from '../../db/queries/events'
import type { Scope } from '../access/scopes'
import { EVENT_TYPE_PATTERNS, EVENT_TYPES, type EventFamily, type EventType, type EventTypePattern } from './schemas'

const FAMILY_SCOPE: Record<EventFamily, Scope> = {
  lead: 'leads:read',
  inquiry: 'leads:read',
  property: 'properties:read',
  image: 'properties:read',
  video: 'properties:read',
}

/** Types whose object holds what only the private read shows (contract §15 §10.1). */
export const PRIVATE_EVENT_TYPES: readonly EventType[] = ['property.created', 'property.updated', 'image.ready', 'image.failed', 'video.ready', 'video.failed']
const PRIVATE_SCOPE: Scope = 'properties:write'

/** The scopes that decide what a key reads of the events: what a webhook endpoint keeps of its key's. */
export const EVENT_READ_SCOPES: readonly Scope[] = [...new Set([...Object.values(FAMILY_SCOPE), PRIVATE_SCOPE])].sort()

export const familyOf = (type: string): EventFamily => type.slice(0, type.indexOf('.')) as EventFamily

export const isPattern = (value: string): value is EventTypePattern => (EVENT_TYPE_PATTERNS as readonly string[]).includes(value)
const isWildcard = (pattern: string) => pattern === '*' || pattern.endsWith('.*')

/** Whether a key with these scopes reads events of this type. */
export function canRead(type: string, scopes: readonly string[]): boolean {
  const family = FAMILY_SCOPE[familyOf(type) as EventFamily]
  if (!family || !scopes.includes(family)) return false
  return !(PRIVATE_EVENT_TYPES as readonly string[]).includes(type) || scopes.includes(PRIVATE_SCOPE)
}

export const readableTypes = (scopes: readonly string[]): EventType[] => EVENT_TYPES.filter((t) => canRead(t, scopes))

/** What of a key's scopes bounds the events an endpoint it sets up is sent (stored with the endpoint). */
export const eventScopesOf = (scopes: readonly string[]): Scope[] => EVENT_READ_SCOPES.filter((s) => scopes.includes(s))

/** The event types a pattern names. */
export function typesOf(pattern: EventTypePattern): EventType[] {
  if (pattern === '*') return [...EVENT_TYPES]
  if (pattern.endsWith('.*')) return EVENT_TYPES.filter((t) => familyOf(t) === pattern.slice(0, -2))
  return [pattern as EventType]
}

/** Whether an event of `type` matches any of the patterns (a webhook endpoint's enabled_events). */
export function matchesAny(type: string, patterns: readonly string[]): boolean {
  for (const p of patterns) {
    if (p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1)))) return true
  }
  return false
}

/**
 * Patterns a key may not subscribe to (a 422 on `enabled_events`, contract §15): an exact type
 * it cannot read; a wildcard (`*`, `family.*`) covering a family whose read scope it lacks, as
 * in 1.1. A wildcard it may use is sent only the types it can read (`property.*` from a
 * `properties:read` key: published, unpublished, deleted).
 */
export function unreadablePatterns(patterns: readonly EventTypePattern[], scopes: readonly Scope[]): EventTypePattern[] {
  return patterns.filter((p) => (isWildcard(p) ? typesOf(p).some((t) => !scopes.includes(FAMILY_SCOPE[familyOf(t)])) : !canRead(p, scopes)))
}

/**
 * The SQL filter for what the key may see, narrowed by the request's patterns (none: every
 * readable type). Types it cannot read simply match nothing.
 */
export function visibleTypes(scopes: readonly Scope[], requested?: readonly EventTypePattern[]): TypeFilter {
  const readable = readableTypes(scopes)
  const everything = !requested || requested.length === 0 || requested.includes('*')
  // Every type readable and asked for (the common case): the prefix '', so reads filter nothing row by row.
  if (everything && readable.length === EVENT_TYPES.length) return { exact: [], prefixes: [''] }
  const asked = everything ? null : new Set(requested.flatMap(typesOf))
  return { exact: readable.filter((t) => !asked || asked.has(t)), prefixes: [] }
}
