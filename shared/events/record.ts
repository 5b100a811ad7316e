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

/** `evt_` + 24 base62 characters (~143 random bits): unguessable, and says nothing about order. */
export function newEventId(): string {
  const bytes = randomBytes(24)
  let id = 'evt_'
  for (const b of bytes) id += ALPHABET[b % 62]
  return id
}

/**
 * `bun run bench events` measures the write paths with and without events side by side: its
 * "without events" API process turns recording off here. Nothing else calls it; the service
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
  return events.map((e) => ({
    id: newEventId(),
    type: e.type,
    data: e.previousAttributes === undefined ? { object: e.object } : { object: e.object, previous_attributes: e.previousAttributes },
  }))
}

export async function recordEvents(tx: Db, businessId: number, events: NewEvent[]): Promise<void> {
  await appendEvents(tx, businessId, eventRows(events))
}

export const recordEvent = (tx: Db, businessId: number, event: NewEvent) => recordEvents(tx, businessId, [event])
