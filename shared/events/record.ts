/**
 * Recording events (contract §10.1): in the same transaction as the change, so there is no
 * event without its change and no change without its event. It writes an outbox row and takes
 * no lock: the relay gives the event its id and its business's `sequence` right after commit
 * (docs/events.md), so it may be called anywhere in the transaction; events recorded later in a
 * transaction come later.
 */
import type { Db } from '../../db/client'
import { appendEvents, type NewEventRow } from '../../db/queries/events'
import { plainJson } from '../platform/plain-json'
import type { EventType } from './schemas'

export interface NewEvent {
  type: EventType
  object: Record<string, unknown>
  previousAttributes?: Record<string, unknown>
}

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
 * The outbox rows of `events`, for a query that writes them together with its change
 * (executeWithEvents and the like); none while the benchmark has recording off.
 */
export function eventRows(events: NewEvent[]): NewEventRow[] {
  if (!recording) return []
  return events.map((e) => ({
    type: e.type,
    // Written once here, numbers in plain decimals (contract §15): GET /events sends this text as it is.
    dataJson: plainJson(e.previousAttributes === undefined ? { object: e.object } : { object: e.object, previous_attributes: e.previousAttributes }),
  }))
}

export async function recordEvents(tx: Db, businessId: number, events: NewEvent[]): Promise<void> {
  await appendEvents(tx, businessId, eventRows(events))
}

export const recordEvent = (tx: Db, businessId: number, event: NewEvent) => recordEvents(tx, businessId, [event])
