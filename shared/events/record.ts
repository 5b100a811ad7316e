/**
 * Recording events (contract §10.1): in the same transaction as the change, so there is no
 * event without its change and no change without its event. It takes no lock: the event gets
 * its business's `sequence` from the relay right after commit (docs/events.md), so it may be
 * called anywhere in the transaction; events recorded later in a transaction come later.
 */
import { randomBytes } from 'node:crypto'
import type { Db } from '../../db/client'
import { appendEvents, type NewEventRow } from '../../db/queries/events'
import type { EventType } from './schemas'

export interface NewEvent {
  type: EventType
  object: Record<string, unknown>
  previousAttributes?: Record<string, unknown>
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** Characters of the id's time prefix: the millisecond in hex (16^11 ms reach the year 2527). */
const TIME_CHARS = 11
/** Random characters after it: 15 base62 characters, ~89 random bits. */
const RANDOM_CHARS = 15

/**
 * The id's leading characters: the current millisecond in hex, fixed width, as the database's
 * new_event_id() writes it for the events its triggers append (migration 0026). Digits and lower
 * case letters sort the same under every collation, so new ids land at the right edge of the
 * primary-key index whatever the database's collation. Fully random ids put each insert on a
 * random leaf of an index larger than shared_buffers: a buffer read (and often a dirty page
 * written out) per event (EXPLAIN ANALYZE figures in docs/events.md "Event ids").
 */
function timePrefix(now: number): string {
  return now.toString(16).padStart(TIME_CHARS, '0').slice(-TIME_CHARS)
}

/**
 * `n` ids, each `evt_` + 26 characters: the millisecond they were minted (11, see timePrefix) and
 * 15 random base62 characters (~89 bits), so unguessable. One draw of random bytes for all of
 * them: a worker's batch of a thousand events spent more on a thousand draws than on the ids.
 */
export function newEventIds(n: number): string[] {
  const bytes = randomBytes(RANDOM_CHARS * n)
  const prefix = `evt_${timePrefix(Date.now())}`
  const ids: string[] = []
  for (let i = 0; i < n; i++) {
    let id = prefix
    for (let j = i * RANDOM_CHARS; j < (i + 1) * RANDOM_CHARS; j++) id += ALPHABET[bytes[j] % 62]
    ids.push(id)
  }
  return ids
}

export const newEventId = (): string => newEventIds(1)[0]

/**
 * `bun run bench events` measures the write paths with and without events side by side: its
 * "without events" API process turns recording off here (and the bench turns off the contacts
 * trigger that appends lead.created in its own database). Nothing else calls it; the service
 * always records (contract §10.1: no change without its event).
 */
let recording = true
export function disableEventRecordingForBenchmark(): void {
  recording = false
}

/**
 * The outbox rows of `events`, each with a new id, for a query that writes them together with
 * its change (executeWithEvents and the like); none while the benchmark has recording off.
 */
export function eventRows(events: NewEvent[]): NewEventRow[] {
  if (!recording) return []
  const ids = newEventIds(events.length)
  return events.map((e, i) => ({
    id: ids[i],
    type: e.type,
    data: e.previousAttributes === undefined ? { object: e.object } : { object: e.object, previous_attributes: e.previousAttributes },
  }))
}

export async function recordEvents(tx: Db, businessId: number, events: NewEvent[]): Promise<void> {
  await appendEvents(tx, businessId, eventRows(events))
}

export const recordEvent = (tx: Db, businessId: number, event: NewEvent) => recordEvents(tx, businessId, [event])
