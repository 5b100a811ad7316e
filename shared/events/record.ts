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
 * The outbox rows of `events`, for a query that writes them together with its change
 * (executeWithEvents and the like).
 */
export function eventRows(events: NewEvent[]): NewEventRow[] {
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
