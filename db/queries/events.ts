/** The event outbox (contract §10.1): recording, reading, relaying, retention and erasure. */
import { sql, type SQL } from 'drizzle-orm'
import type { Db } from '../client'

/**
 * A list as ONE bound parameter (drizzle spreads a JS array into `($1, $2, …)`): sent as JSON
 * text and unpacked by PostgreSQL, so any number of values is one parameter, safely quoted.
 */
export const textArray = (values: readonly string[]) => sql`array(select jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`
export const intArray = (values: readonly number[]) => sql`array(select jsonb_array_elements_text(${JSON.stringify(values)}::jsonb)::int)`

export interface NewEventRow {
  type: string
  data?: unknown
  /** `data` already written as JSON text (how the service records them: numbers in plain decimals); wins over `data`. */
  dataJson?: string
}

const dataText = (e: NewEventRow) => e.dataJson ?? JSON.stringify(e.data)

/** A timestamp column as JavaScript's toISOString writes it (UTC, milliseconds, truncated). */
export const isoText = (column: SQL) => sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/**
 * The statement adding one business's events to the outbox, in the order given (the key `n`
 * numbers them in the order the rows are inserted). A plain INSERT of three columns: planning it
 * on every request costs less than calling a PL/pgSQL function that inserts with a kept plan
 * (pgbench, c=16: 27 against 37 µs of PostgreSQL CPU over the change alone, docs/events.md).
 */
function insertEventsSql(businessId: number, rows: NewEventRow[]): SQL {
  if (rows.length === 1) {
    const [e] = rows
    return sql`insert into event_outbox (business_id, type, data) values (${businessId}, ${e.type}, ${dataText(e)}::json)`
  }
  // json, not jsonb: each `data` keeps the text it was written as (its keys in the order they
  // were written, its numbers as written), without being parsed into jsonb and rendered back.
  const recordset = JSON.stringify(rows.map((e) => ({ type: e.type, data: dataText(e) })))
  return sql`
    insert into event_outbox (business_id, type, data)
    select ${businessId}, e.type, e.data::json
    from rows from (json_to_recordset(${recordset}::json) as (type text, data text)) with ordinality as e(type, data, n)
    order by e.n`
}

/**
 * Adds events of one business to the outbox (event_outbox) in the caller's transaction, in one
 * statement, in the order given. Takes no lock and mints nothing: the relay gives each its id
 * and its business's next sequence after commit (sequenceOutboxEvents), so concurrent writes of
 * one business never wait for each other's commit. `created_at` is the statement's clock, so
 * events recorded later in a transaction are later.
 */
export async function appendEvents(db: Db, businessId: number, rows: NewEventRow[]): Promise<void> {
  if (rows.length === 0) return
  await db.execute(insertEventsSql(businessId, rows))
}

/**
 * Runs `write` (an insert, update or delete without RETURNING) and appends `rows` as appendEvents
 * does, in the same statement (a data-modifying CTE). A statement costs PostgreSQL about as much
 * as a small row write (docs/events.md "Figures"), so the change and its event go as one.
 */
export async function executeWithEvents(db: Db, write: SQL, businessId: number, rows: NewEventRow[]): Promise<void> {
  if (rows.length === 0) await db.execute(write)
  else await db.execute(sql`with change as (${write}) ${insertEventsSql(businessId, rows)}`)
}

export interface EventRecord {
  id: string
  type: string
  sequence: number
  createdAt: Date
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> }
}

type RawEvent = { id: string; type: string; sequence: string | number; created_at: string | Date; data: EventRecord['data'] }
const toRecord = (r: RawEvent): EventRecord => ({ id: r.id, type: r.type, sequence: Number(r.sequence), createdAt: new Date(r.created_at), data: r.data })

/**
 * Which types a read may return: exact names and `prefix.` prefixes (both already allowed for the
 * key). The prefix `''` is every type.
 */
export interface TypeFilter {
  exact: string[]
  prefixes: string[]
}

const typeCondition = (f: TypeFilter) => {
  // A key that reads every family (the common case) needs no condition on each row: with it, a
  // page of 100 of 1M events answered 2,241 statements/s, without it (and without to_json on
  // id and type, below) 2,983 (pgbench, c=16, means of three runs).
  if (f.prefixes.includes('')) return sql`true`
  const likes = f.prefixes.map((p) => `${p.replace(/[\\%_]/g, '\\$&')}%`)
  return sql`(type = any(${textArray(f.exact)}) or type like any(${textArray(likes)}))`
}

/**
 * One page after `after`, ascending by sequence: `limit + 1` rows are read so the caller knows
 * whether more follow. Walks events_business_sequence_uq from `after`; the type condition is a
 * filter on those rows.
 */
export async function listEvents(db: Db, q: { businessId: number; after: number; limit: number; types: TypeFilter }): Promise<EventRecord[]> {
  const rows = await db.execute<RawEvent>(sql`
    select id, type, sequence, created_at, data from events
    where business_id = ${q.businessId} and sequence > ${q.after} and ${typeCondition(q.types)}
    order by sequence limit ${q.limit + 1}`)
  return [...rows].map(toRecord)
}

/**
 * The same page as listEvents with each event as the JSON text of its EventView: `data` is read
 * as the stored JSON text and spliced in, `created_at` written by PostgreSQL as JavaScript's
 * toISOString writes it (milliseconds, truncated). A page is up to 1,000 events; parsing each
 * `data` into objects and writing it out again cost more CPU than the query itself
 * (`bun run bench events`, phase 4). `rows` (up to `limit + 1`) says whether more follow.
 */
export async function listEventsJson(
  db: Db,
  q: { businessId: number; after: number; limit: number; types: TypeFilter },
): Promise<{ events: string[]; rows: number; last: number | null }> {
  // Each row arrives as its JSON text: one column to decode per event instead of five. `id` and
  // `type` need no escaping (ids are `evt_` + letters and digits as new_event_id() mints them,
  // types come from EVENT_TYPES), so they are spliced as they are.
  const rows = await db.execute<{ event: string; sequence: string }>(sql`
    select '{"id":"' || id || '","type":"' || type
        || '","created_at":"' || ${isoText(sql`created_at`)}
        || '","sequence":' || sequence || ',"data":' || data::text || '}' as event, sequence
    from events
    where business_id = ${q.businessId} and sequence > ${q.after} and ${typeCondition(q.types)}
    order by sequence limit ${q.limit + 1}`)
  const shown = [...rows].slice(0, q.limit)
  return { events: shown.map((r) => r.event), rows: rows.length, last: shown.length ? Number(shown[shown.length - 1].sequence) : null }
}

export async function findEvent(db: Db, businessId: number, id: string, types: TypeFilter): Promise<EventRecord | null> {
  const rows = await db.execute<RawEvent>(sql`
    select id, type, sequence, created_at, data from events where id = ${id} and business_id = ${businessId} and ${typeCondition(types)}`)
  return rows[0] ? toRecord(rows[0]) : null
}

/** Events by id (the delivery runner reads the bodies it sends). */
export async function findEventsByIds(db: Db, ids: string[]): Promise<Map<string, EventRecord>> {
  if (ids.length === 0) return new Map()
  const rows = await db.execute<RawEvent>(sql`select id, type, sequence, created_at, data from events where id = any(${textArray(ids)})`)
  return new Map([...rows].map((r) => [r.id, toRecord(r)]))
}

/** The newest sequence of a business (0 when none): where `cli events tail` starts. */
export async function lastSequence(db: Db, businessId: number): Promise<number> {
  const rows = await db.execute<{ s: string | null }>(sql`select max(sequence) as s from events where business_id = ${businessId}`)
  return Number(rows[0]?.s ?? 0)
}

// ---- relay ------------------------------------------------------------------------------------

export interface RelayedEvent {
  id: string
  businessId: number
  type: string
}

/**
 * The relay's batch, relay_outbox() (migration 0028): takes up to `limit` committed outbox rows
 * with a key above `after`, oldest first, locked for its transaction (SKIP LOCKED: a second relay
 * takes others), gives each its business's next sequence (per business one counter upsert,
 * businesses in id order so two relays cannot deadlock, each business's rows in recording
 * order), inserts them into `events` with a new id (new_event_id()) and their data (a
 * lead.created's rendered from its contact row by lead_created_data()), and deletes them from
 * the outbox. Counter row locks are held by this transaction only, never by the writes that
 * recorded the events. Returns the new events, in sequence order per business, and the highest
 * outbox key taken (null when none).
 */
export async function sequenceOutboxEvents(db: Db, limit: number, after = 0): Promise<{ events: RelayedEvent[]; lastKey: number | null }> {
  const rows = await db.execute<{ event_id: string; event_business: number; event_type: string; outbox_n: string }>(
    sql`select event_id, event_business, event_type, outbox_n from relay_outbox(${limit}::int, ${after}::bigint)`,
  )
  return {
    events: [...rows].map((r) => ({ id: r.event_id, businessId: r.event_business, type: r.event_type })),
    lastKey: rows.length ? Number(rows[0].outbox_n) : null,
  }
}

/** The age in seconds of the oldest event not yet relayed (0 when none): a metric. */
export async function oldestUnrelayedAgeSeconds(db: Db): Promise<number> {
  const rows = await db.execute<{ age: number | null }>(sql`
    select extract(epoch from now() - created_at)::float8 as age from event_outbox order by n limit 1`)
  return Math.max(0, Number(rows[0]?.age ?? 0))
}

// ---- retention --------------------------------------------------------------------------------

/**
 * Deletes up to `batch` events older than `days` (contract §10.1: kept 30 days); their webhook
 * deliveries and attempts go with them (cascade). Uses events_created_idx. Returns how many went.
 */
export async function deleteEventsOlderThan(db: Db, days: number, batch: number): Promise<number> {
  const rows = await db.execute(sql`
    delete from events where id in (
      select id from events where created_at < now() - make_interval(days => ${days}) order by created_at limit ${batch}
    ) returning id`)
  return rows.length
}

// ---- erasure (contract §13) -------------------------------------------------------------------

/** The events about a lead: its lead.* events and the inquiry.created events of its inquiries. */
const aboutLead = (businessId: number, leadId: number) => sql`
  business_id = ${businessId} and (
    (type like 'lead.%' and data->'object'->>'id' = ${String(leadId)})
    or (type like 'inquiry.%' and data->'object'->>'lead_id' = ${String(leadId)}))`

export async function eventsAboutLead(db: Db, businessId: number, leadId: number): Promise<EventRecord[]> {
  const rows = await db.execute<RawEvent>(sql`
    select id, type, sequence, created_at, data from events where ${aboutLead(businessId, leadId)} order by sequence`)
  return [...rows].map(toRecord)
}

/**
 * The outbox's rows about the lead keep only `{object: {id}}`, as scrubEventsAboutLead does for
 * events. Run it first: it waits for a relay batch holding any of those rows, so the events that
 * batch wrote are there for scrubEventsAboutLead, and the rows it locks are skipped by relays
 * until the erasure commits. A scan of the outbox, which the relay keeps short.
 */
export async function scrubOutboxAboutLead(db: Db, businessId: number, leadId: number): Promise<void> {
  await db.execute(sql`
    update event_outbox
    set data = json_build_object('object', json_build_object('id', coalesce(data->'object'->'id', contact->'id'))), contact = null
    where business_id = ${businessId} and (
      (type = 'lead.created' and contact->>'id' = ${String(leadId)})
      or (type like 'lead.%' and data->'object'->>'id' = ${String(leadId)})
      or (type like 'inquiry.%' and data->'object'->>'lead_id' = ${String(leadId)}))`)
}

/**
 * Keeps only `{object: {id}}` of every event about the lead (its personal fields go), and returns
 * their ids. A scan of the business's events (at most 30 days of them): erasure is rare, and an
 * index for it would cost every event insert.
 */
export async function scrubEventsAboutLead(db: Db, businessId: number, leadId: number): Promise<string[]> {
  const rows = await db.execute<{ id: string }>(sql`
    update events set data = jsonb_build_object('object', jsonb_build_object('id', data->'object'->'id'))
    where ${aboutLead(businessId, leadId)} returning id`)
  return [...rows].map((r) => r.id)
}

/**
 * The public document of a published listing as the catalogue holds it, read in the caller's
 * transaction right after its rebuild (property.published carries it, contract §10.1).
 */
export async function catalogueDocOf(db: Db, propertyId: number): Promise<Record<string, unknown> | null> {
  const rows = await db.execute<{ doc: Record<string, unknown> }>(sql`select doc from catalogue_entries where property_id = ${propertyId}`)
  return rows[0]?.doc ?? null
}
