/**
 * Migrations 0029 and 0030 on databases of the previous version (migrated to 0028 first, in
 * databases of their own, dropped at the end):
 * - 0029 (catalogue_derivation): a catalogue that has rows, stored by a version that published
 *   descriptions as sent, starts at derivation 0, so the first worker queues their rebuild
 *   (test/security/public-descriptions.test.ts runs that rebuild); an empty one starts current.
 * - 0030 (webhook_endpoints.event_scopes): each endpoint gets the read scopes every key of its
 *   business that could have set it up holds, and at least the families it subscribes to.
 */
import { afterAll, expect, test } from 'bun:test'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { drizzle } from 'drizzle-orm/postgres-js'
import { migrate } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'
import { withDatabase } from '../../db/connection-url'
import { migrateDatabase } from '../../db/migrate'
import { CATALOGUE_DOC_VERSION } from '../../shared/listings/catalogue-upgrade'
import { getConfig } from '../../shared/platform/config'

const names = [`property_lead_deriv_rows_${process.pid}_${Date.now()}`, `property_lead_deriv_empty_${process.pid}_${Date.now()}`]
const admin = postgres(withDatabase(getConfig().databaseUrl, 'postgres'), { max: 1, onnotice: () => {} })
const folder = mkdtempSync(join(tmpdir(), 'migrations-0028-'))

afterAll(async () => {
  rmSync(folder, { recursive: true, force: true })
  for (const name of names) await admin.unsafe(`drop database if exists "${name}" with (force)`)
  await admin.end()
})

/** A database migrated to 0028, as the previous version left it; `seed` runs on it; then every migration, then `check`. */
async function afterUpgrade(
  name: string,
  seed: (sql: postgres.Sql) => Promise<void>,
  check: (sql: postgres.Sql) => Promise<void> = async () => {},
): Promise<number> {
  await admin.unsafe(`create database "${name}"`)
  const url = withDatabase(getConfig().databaseUrl, name)
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    await sql`create extension if not exists postgis`
    await migrate(drizzle(sql), { migrationsFolder: folder })
    await seed(sql)
    await migrateDatabase(url)
    await check(sql)
    const [{ version }] = await sql<{ version: number }[]>`select version from catalogue_derivation`
    return version
  } finally {
    await sql.end({ timeout: 1 })
  }
}

const endpoint = async (sql: postgres.Sql, business: number, events: string[], at: string) =>
  (
    await sql<{ id: number }[]>`insert into webhook_endpoints (business_id, url, enabled_events, secret_sealed, created_at, updated_at)
    values (${business}, 'https://hooks.example/x', ${events}, 'v1.x', ${at}, ${at}) returning id`
  )[0].id
const key = (sql: postgres.Sql, business: number, scopes: string[], at: string) =>
  sql`insert into api_keys (business_id, key_id, secret_hash, scopes, created_at)
    values (${business}, ${`k${Math.random().toString(36).slice(2)}`}, 'x', ${scopes}, ${at})`

test('0029: a catalogue with rows starts behind (its rows are rebuilt); an empty ' +
  'one starts current. 0030: endpoints keep what their possible creators all read', async () => {
  cpSync(fileURLToPath(new URL('../../db/migrations', import.meta.url)), folder, { recursive: true })
  const journal = JSON.parse(readFileSync(join(folder, 'meta/_journal.json'), 'utf8')) as { entries: { idx: number }[] }
  journal.entries = journal.entries.filter((e) => e.idx <= 28)
  writeFileSync(join(folder, 'meta/_journal.json'), JSON.stringify(journal))

  const endpoints: Record<string, number> = {}
  const withRows = await afterUpgrade(
    names[0],
    async (sql) => {
      const [{ id: biz }] = await sql<{ id: number }[]>`insert into businesses (name) values ('derivation') returning id`
      const [{ id }] = await sql<{ id: number }[]>`
      insert into properties (business_id, operations, type, title, description, price_sale, location, area, published_at)
      values (${biz}, '{venta}', 'casa', 'Casa', '<script>alert(1)</script>', 1, '{"city":"Valencia"}', '{"total":1}', now()) returning id`
      await sql`insert into catalogue_entries (property_id, business_id, doc, status, operations, type, city_lc, bedrooms, is_featured, updated_at)
      values (${id}, ${biz}, '{"description":"<script>alert(1)</script>"}', 'disponible', '{venta}', 'casa', 'valencia', 0, false, now())`

      const all = ['properties:read', 'properties:write', 'leads:read', 'leads:write', 'webhooks:write']
      // One key able to set endpoints up, with every scope: its endpoint keeps them.
      const [{ id: a }] = await sql<{ id: number }[]>`insert into businesses (name) values ('a') returning id`
      await key(sql, a, all, '2026-11-01T00:00:00Z')
      endpoints.owner = await endpoint(sql, a, ['*'], '2026-11-02T00:00:00Z')
      // The owner's key and a portal partner's: either may have made it, so only what both read.
      const [{ id: b }] = await sql<{ id: number }[]>`insert into businesses (name) values ('b') returning id`
      await key(sql, b, all, '2026-11-01T00:00:00Z')
      await key(sql, b, ['properties:read', 'webhooks:write'], '2026-11-01T00:00:00Z')
      await key(sql, b, ['properties:read', 'properties:write'], '2026-11-01T00:00:00Z')
      endpoints.shared = await endpoint(sql, b, ['property.*'], '2026-11-02T00:00:00Z')
      // Keys made after the endpoint's last change cannot have made it; the family it names was readable by its maker.
      const [{ id: c }] = await sql<{ id: number }[]>`insert into businesses (name) values ('c') returning id`
      endpoints.orphan = await endpoint(sql, c, ['lead.created'], '2026-11-02T00:00:00Z')
      await key(sql, c, all, '2026-11-03T00:00:00Z')
    },
    async (sql) => {
      const rows = await sql<{ id: number; event_scopes: string[] }[]>`select id, event_scopes from webhook_endpoints`
      const scopes = new Map(rows.map((r) => [r.id, r.event_scopes]))
      expect(scopes.get(endpoints.owner)).toEqual(['leads:read', 'properties:read', 'properties:write'])
      expect(scopes.get(endpoints.shared)).toEqual(['properties:read'])
      expect(scopes.get(endpoints.orphan)).toEqual(['leads:read'])
    },
  )
  expect(withRows).toBe(0)
  expect(await afterUpgrade(names[1], async () => {})).toBe(CATALOGUE_DOC_VERSION)
}, 120_000)
