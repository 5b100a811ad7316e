/**
 * Which events a key sees (contract §10.1): `lead.*` and `inquiry.*` need `leads:read`;
 * `property.*`, `image.*` and `video.*` need `properties:read`. Others are simply absent — from
 * lists, from GET /events/{id} (a 404, §15), and from what a webhook endpoint may subscribe to.
 */
import type { TypeFilter } from '../../db/queries/events'
import type { Scope } from '../access/scopes'
import { EVENT_FAMILIES, EVENT_TYPE_PATTERNS, EVENT_TYPES, type EventFamily, type EventType, type EventTypePattern } from './schemas'

const FAMILY_SCOPE: Record<EventFamily, Scope> = {
  lead: 'leads:read',
  inquiry: 'leads:read',
  property: 'properties:read',
  image: 'properties:read',
  video: 'properties:read',
}

export const familyOf = (type: string): EventFamily => type.slice(0, type.indexOf('.')) as EventFamily

export function readableFamilies(scopes: readonly Scope[]): EventFamily[] {
  return EVENT_FAMILIES.filter((f) => scopes.includes(FAMILY_SCOPE[f]))
}

export const isPattern = (value: string): value is EventTypePattern => (EVENT_TYPE_PATTERNS as readonly string[]).includes(value)

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

/** Patterns naming a type the scopes cannot read (a 422 on `enabled_events`, contract §15). */
export function unreadablePatterns(patterns: readonly EventTypePattern[], scopes: readonly Scope[]): EventTypePattern[] {
  const readable = new Set(readableFamilies(scopes))
  return patterns.filter((p) => typesOf(p).some((t) => !readable.has(familyOf(t))))
}

/**
 * The SQL filter for what the key may see, narrowed by the request's patterns (none: every
 * readable type). Patterns of unreadable families simply match nothing.
 */
export function visibleTypes(scopes: readonly Scope[], requested?: readonly EventTypePattern[]): TypeFilter {
  const readable = readableFamilies(scopes)
  if (!requested || requested.length === 0 || requested.includes('*')) {
    // Every family readable: every type (the prefix ''), so reads filter nothing row by row.
    return { exact: [], prefixes: readable.length === EVENT_FAMILIES.length ? [''] : readable.map((f) => `${f}.`) }
  }
  const exact = new Set<string>()
  const prefixes = new Set<string>()
  for (const p of requested) {
    if (p.endsWith('.*')) {
      const family = p.slice(0, -2) as EventFamily
      if (readable.includes(family)) prefixes.add(`${family}.`)
    } else if (readable.includes(familyOf(p))) exact.add(p)
  }
  return { exact: [...exact], prefixes: [...prefixes] }
}
