/**
 * What the database does for the event outbox (migrations 0026-0028): every contact inserted
 * adds its lead.created to the outbox, whoever inserts it, and the relay renders it as the Lead;
 * ids minted there have one shape and sort by time; appendEvents's rows keep the order given;
 * deleting a business deletes its events and outbox rows, as the foreign key it replaces did.
 */
import { afterAll, expect, test } from 'bun:test'
import postgres from 'postgres'
import { createDatabase } from '../../db/client'
import { appendEvents, sequenceOutboxEvents } from '../../db/queries/events'
import { eventRows } from '../../shared/events/record'
import { EVENT_ID_RE } from '../../shared/events/schemas'
import { eventually } from '../helpers/eventually'

const sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
const database = createDatabase(process.env.DATABASE_URL!, { max: 1 })
afterAll(() => Promise.all([sql.end({ timeout: 1 }), database.sql.end({ timeout: 1 })]))

const newBusiness = async (name: string) => (await sql<{ id: number }[]>`insert into businesses (name) values (${name}) returning id`)[0].id
/** What a relay does with the outbox, without the webhook deliveries (none of these businesses has an endpoint). */
const relay = async () => {
  while ((await database.db.transaction((tx) => sequenceOutboxEvents(tx, 1000))).events.length === 1000);
}
const outboxOf = async (businessId: number) => (await sql<{ n: number }[]>`select count(*)::int as n from event_outbox where business_id = ${businessId}`)[0].n
const eventsOf = async (businessId: number) => {
  await relay()
  return sql<
    { id: string; type: string; data: { object: Record<string, unknown> } }[]
  >`select id, type, data from events where business_id = ${businessId} order by sequence`
}

test('each contact inserted appends its lead.created, in insertion order; a skipped duplicate appends none', async () => {
  const biz = await newBusiness('events-triggers-insert')
  const rows = await sql<{ id: number }[]>`
    insert into contacts (business_id, name, phone, budget_max, search_location, property_types, rating, notes)
    values (${biz}, ${'Zoë "Z" \\ O\u2019Neil'}, '+34600100001', 1250.75, ${sql.json({ city: 'Valencia', radius_km: 3 })}, '{piso,atico}', 4, ${'a\nb'}),
           (${biz}, 'Second', '+34600100002', null, null, '{}', null, '')
    returning id`
  await sql`insert into contacts (business_id, name, phone) values (${biz}, 'Dup', '+34600100001') on conflict do nothing`
  const events = await eventsOf(biz)
  expect(events.map((e) => [e.type, e.data.object.id])).toEqual([
    ['lead.created', rows[0].id],
    ['lead.created', rows[1].id],
  ])
  const [first] = events
  const [stored] = await sql<{ created_at: Date; updated_at: Date }[]>`select created_at, updated_at from contacts where id = ${rows[0].id}`
  expect(first.data.object).toEqual({
    id: rows[0].id,
    type: 'demandante',
    name: 'Zoë "Z" \\ O\u2019Neil',
    email: null,
    phone: '+34600100001',
    source: null,
    operation: null,
    property_types: ['piso', 'atico'],
    rating: 4,
    urgency: null,
    budget_max: 1250.75,
    min_bedrooms: null,
    search_location: { city: 'Valencia', radius_km: 3 },
    notes: 'a\nb',
    created_at: stored.created_at.toISOString(),
    updated_at: stored.updated_at.toISOString(),
  })
  expect(Object.keys(first.data.object)).toEqual([
    'id',
    'type',
    'name',
    'email',
    'phone',
    'source',
    'operation',
    'property_types',
    'rating',
    'urgency',
    'budget_max',
    'min_bedrooms',
    'search_location',
    'notes',
    'created_at',
    'updated_at',
  ])
  await sql`delete from businesses where id = ${biz}`
})

test('ids minted by the database: one shape, all different, sorting after ids minted before them', async () => {
  const [{ before }] = await sql<{ before: string }[]>`select new_event_id() as before`
  const msOf = (id: string) => parseInt(id.slice(4, 15), 16)
  const clockMs = async () => Number((await sql<{ ms: string }[]>`select floor(extract(epoch from clock_timestamp()) * 1000)::bigint as ms`)[0].ms)
  // Ids of the same millisecond order by their random part: the ones below come from a later one.
  await eventually(async () => (await clockMs()) > msOf(before), { intervalMs: 1, what: "the database clock to pass the first id's millisecond" })
  const ids = (await sql<{ id: string }[]>`select new_event_id() as id from generate_series(1, 2000)`).map((r) => r.id)
  const after = await clockMs()
  for (const id of ids) expect(id).toMatch(/^evt_[0-9a-f]{11}[A-Za-z0-9]{15}$/)
  // Every id minted is one the routes accept as an event id.
  expect(ids.every((id) => EVENT_ID_RE.test(id))).toBe(true)
  expect(new Set(ids).size).toBe(2000)
  expect(new Set(ids.map((id) => id.slice(15))).size).toBe(2000)
  expect(ids.every((id) => id > before)).toBe(true)
  // …in byte order and in a locale collation alike (new ids go to the index's right edge whatever the collation).
  const collator = new Intl.Collator('en-US')
  expect(ids.every((id) => collator.compare(before, id) < 0)).toBe(true)
  // The time in an id is the database clock's when it was minted.
  expect(ids.every((id) => msOf(id) > msOf(before) && msOf(id) <= after)).toBe(true)
})

test('several events appended in one statement keep their order and their data as written', async () => {
  const biz = await newBusiness('events-triggers-append')
  const objects = [{ id: 3, z: 1, a: 'é "q"' }, { id: 1 }, { id: 2, nested: { b: [1, 2], a: null } }]
  const rows = eventRows(objects.map((object) => ({ type: 'property.updated' as const, object })))
  await database.db.transaction((tx) => appendEvents(tx, biz, rows))
  expect(await outboxOf(biz)).toBe(3)
  await relay()
  expect(await outboxOf(biz)).toBe(0)
  const stored = await sql<{ sequence: string; data: string }[]>`select sequence, data::text as data from events where business_id = ${biz} order by sequence`
  expect([...stored]).toEqual(rows.map((r, i) => ({ sequence: String(i + 1), data: r.dataJson! })))
  await sql`delete from businesses where id = ${biz}`
})

test('deleting a business deletes its events and no other business\u2019s', async () => {
  const [gone, kept] = [await newBusiness('events-triggers-gone'), await newBusiness('events-triggers-kept')]
  await sql`insert into contacts (business_id, name) values (${gone}, 'A'), (${kept}, 'B')`
  expect((await eventsOf(gone)).length).toBe(1)
  await sql`insert into contacts (business_id, name) values (${gone}, 'C'), (${kept}, 'D')`
  expect(await outboxOf(gone)).toBe(1)
  await sql`delete from businesses where id = ${gone}`
  expect(await outboxOf(gone)).toBe(0)
  expect((await eventsOf(gone)).length).toBe(0)
  expect((await eventsOf(kept)).length).toBe(2)
  await sql`delete from businesses where id = ${kept}`
})
