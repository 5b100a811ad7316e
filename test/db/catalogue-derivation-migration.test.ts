/**
 * Migration 0029 (catalogue_derivation): a catalogue that has rows, stored by a version that
 * published descriptions as sent, starts at derivation 0, so the first worker queues their
 * rebuild (test/security/public-descriptions.test.ts runs that rebuild); an empty one starts at
 * the current derivation. In databases of their own, migrated to 0028 first, dropped at the end.
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

/** A database migrated to 0028, as the previous version left it; `seed` runs on it; then every migration. */
async function derivationAfterUpgrade(name: string, seed: (sql: postgres.Sql) => Promise<void>): Promise<number> {
  await admin.unsafe(`create database "${name}"`)
  const url = withDatabase(getConfig().databaseUrl, name)
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    await sql`create extension if not exists postgis`
    await migrate(drizzle(sql), { migrationsFolder: folder })
    await seed(sql)
    await migrateDatabase(url)
    const [{ version }] = await sql<{ version: number }[]>`select version from catalogue_derivation`
    return version
  } finally {
    await sql.end({ timeout: 1 })
  }
}

test('a catalogue with rows starts behind (its rows are rebuilt); an empty one starts current', async () => {
  cpSync(fileURLToPath(new URL('../../db/migrations', import.meta.url)), folder, { recursive: true })
  const journal = JSON.parse(readFileSync(join(folder, 'meta/_journal.json'), 'utf8')) as { entries: { idx: number }[] }
  journal.entries = journal.entries.filter((e) => e.idx <= 28)
  writeFileSync(join(folder, 'meta/_journal.json'), JSON.stringify(journal))

  const withRows = await derivationAfterUpgrade(names[0], async (sql) => {
    const [{ id: biz }] = await sql<{ id: number }[]>`insert into businesses (name) values ('derivation') returning id`
    const [{ id }] = await sql<{ id: number }[]>`
      insert into properties (business_id, operations, type, title, description, price_sale, location, area, published_at)
      values (${biz}, '{venta}', 'casa', 'Casa', '<script>alert(1)</script>', 1, '{"city":"Valencia"}', '{"total":1}', now()) returning id`
    await sql`insert into catalogue_entries (property_id, business_id, doc, status, operations, type, city_lc, bedrooms, is_featured, updated_at)
      values (${id}, ${biz}, '{"description":"<script>alert(1)</script>"}', 'disponible', '{venta}', 'casa', 'valencia', 0, false, now())`
  })
  expect(withRows).toBe(0)
  expect(await derivationAfterUpgrade(names[1], async () => {})).toBe(CATALOGUE_DOC_VERSION)
}, 120_000)
