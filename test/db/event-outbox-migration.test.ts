/**
 * Migration 0028 (the event outbox) on a database that has events not yet relayed: they move to
 * event_outbox in the order they were recorded and are relayed from there; relayed events stay
 * as they were. In a database of its own, migrated to 0027 first, dropped at the end.
 */
import { afterAll, expect, test } from 'bun:test'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { drizzle } from 'drizzle-orm/postgres-js'
import { migrate } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'
import { createDatabase } from '../../db/client'
import { withDatabase } from '../../db/connection-url'
import { migrateDatabase } from '../../db/migrate'
import { sequenceOutboxEvents } from '../../db/queries/events'
import { getConfig } from '../../shared/platform/config'

const name = `property_lead_outbox_${process.pid}_${Date.now()}`
const url = withDatabase(getConfig().databaseUrl, name)
const admin = postgres(withDatabase(getConfig().databaseUrl, 'postgres'), { max: 1, onnotice: () => {} })
const folder = mkdtempSync(join(tmpdir(), 'migrations-0027-'))

afterAll(async () => {
  rmSync(folder, { recursive: true, force: true })
  await admin.unsafe(`drop database if exists "${name}" with (force)`)
  await admin.end()
})

test('events recorded before 0028 and not yet relayed are relayed after it, in recording order, once', async () => {
  // The committed migrations up to 0027, as a database of the previous version had them.
  cpSync(fileURLToPath(new URL('../../db/migrations', import.meta.url)), folder, { recursive: true })
  const journal = JSON.parse(readFileSync(join(folder, 'meta/_journal.json'), 'utf8')) as { entries: { idx: number }[] }
  journal.entries = journal.entries.filter((e) => e.idx <= 27)
  writeFileSync(join(folder, 'meta/_journal.json'), JSON.stringify(journal))
  await admin.unsafe(`create database "${name}"`)
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    await sql`create extension if not exists postgis`
    await migrate(drizzle(sql), { migrationsFolder: folder })
    const [{ id: biz }] = await sql<{ id: number }[]>`insert into businesses (name) values ('outbox-migration') returning id`
    // One relayed event (sequence 1), then three recorded by 0027's functions, not yet relayed.
    await sql`insert into events (id, business_id, type, sequence, data, relayed_at)
      values ('evt_old1', ${biz}, 'property.created', 1, '{"object":{"id":1}}', now())`
    await sql`insert into event_counters (business_id, last_sequence) values (${biz}, 1)`
    await sql`select append_event(${biz}, new_event_id(), 'property.updated', '{"object":{"id":1,"title":"a"}}')`
    const [{ id: leadId }] = await sql<{ id: number }[]>`insert into contacts (business_id, name, phone) values (${biz}, 'Lena', '+34600999001') returning id`
    await sql`select append_event(${biz}, new_event_id(), 'property.updated', '{"object":{"id":1,"title":"b"}}')`
    const unrelayed = await sql<{ type: string; data: unknown }[]>`select type, data from events where relayed_at is null order by sequence`
    expect(unrelayed.map((e) => e.type)).toEqual(['property.updated', 'lead.created', 'property.updated'])

    await migrateDatabase(url)
    expect((await sql<{ n: number }[]>`select count(*)::int as n from event_outbox`)[0].n).toBe(3)
    expect((await sql<{ id: string }[]>`select id from events`).map((e) => e.id)).toEqual(['evt_old1'])

    const database = createDatabase(url, { max: 1 })
    try {
      const { events: relayed } = await database.db.transaction((tx) => sequenceOutboxEvents(tx, 1000))
      expect(relayed.map((e) => e.type)).toEqual(['property.updated', 'lead.created', 'property.updated'])
    } finally {
      await database.sql.end({ timeout: 1 })
    }
    const events = await sql<
      { type: string; sequence: string; data: any }[]
    >`select type, sequence, data from events where business_id = ${biz} order by sequence`
    expect(events.map((e) => [e.type, Number(e.sequence)])).toEqual([
      ['property.created', 1],
      ['property.updated', 2],
      ['lead.created', 3],
      ['property.updated', 4],
    ])
    expect(events.map((e) => e.data)).toEqual([{ object: { id: 1 } }, unrelayed[0].data, unrelayed[1].data, unrelayed[2].data])
    expect(events[2].data.object).toMatchObject({ id: leadId, name: 'Lena', phone: '+34600999001' })
    // New inserts go through the outbox.
    await sql`insert into contacts (business_id, name) values (${biz}, 'After')`
    expect((await sql<{ type: string }[]>`select type from event_outbox`).map((r) => r.type)).toEqual(['lead.created'])
  } finally {
    await sql.end({ timeout: 1 })
  }
})
