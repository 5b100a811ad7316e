/** The event outbox (contract §10.1). Every write runs inside the caller's transaction. */
import { sql } from 'drizzle-orm'
import type { Db } from '../client'

export interface NewEventRow {
  id: string
  type: string
  data: unknown
}

/**
 * Appends events of one business with the next sequences, in one statement. The counter row is
 * locked from here to the end of the transaction, so call it as the transaction's last write:
 * transactions of the same business then take their sequences in commit order, and the lock is
 * held only for the commit itself.
 */
export async function appendEvents(db: Db, businessId: number, rows: NewEventRow[]): Promise<{ id: string; sequence: number }[]> {
  if (rows.length === 0) return []
  const result = await db.execute<{ id: string; sequence: string | number }>(sql`
    with counter as (
      insert into event_counters (business_id, last_sequence) values (${businessId}, ${rows.length})
      on conflict (business_id) do update set last_sequence = event_counters.last_sequence + excluded.last_sequence
      returning last_sequence
    )
    insert into events (id, business_id, type, sequence, data)
    select e.item->>'id', ${businessId}, e.item->>'type', counter.last_sequence - ${rows.length} + e.ord, e.item->'data'
    from counter, jsonb_array_elements(${JSON.stringify(rows)}::jsonb) with ordinality as e(item, ord)
    returning id, sequence`)
  return [...result].map((r) => ({ id: r.id, sequence: Number(r.sequence) }))
}
