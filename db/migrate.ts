/**
 * Creates the database when it does not exist, enables PostGIS and applies the committed
 * drizzle-kit migrations. Safe to run on every start and from several processes. The command
 * (`bun run db:migrate`, cli/migrate.ts) reads the configuration and reports failures.
 */
import { drizzle } from 'drizzle-orm/postgres-js'
import { migrate } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseConnectionUrl, withDatabase } from './connection-url'

const MIGRATIONS = fileURLToPath(new URL('./migrations', import.meta.url))
/** SQL that evolves (functions, triggers): one current definition per file, re-applied when it changes. */
export const REPEATABLE = fileURLToPath(new URL('./functions', import.meta.url))

export async function ensureDatabase(url: string): Promise<void> {
  const name = parseConnectionUrl(url).database
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`database name "${name}" is not a plain identifier`)
  const sql = postgres(withDatabase(url, 'postgres'), { max: 1, connect_timeout: 5, onnotice: () => {} })
  try {
    const rows = await sql`select 1 from pg_database where datname = ${name}`
    if (rows.length === 0) {
      try {
        await sql.unsafe(`create database "${name}"`)
      } catch (error) {
        // Another process created it between the check and the create.
        if ((error as { code?: string }).code !== '42P04') throw error
      }
    }
  } finally {
    await sql.end({ timeout: 1 })
  }
}

export async function migrateDatabase(url: string): Promise<void> {
  await ensureDatabase(url)
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} })
  try {
    // Serialises concurrent migrators (several replicas starting at once).
    await sql`select pg_advisory_lock(727001)`
    try {
      await sql`create extension if not exists postgis`.catch((error) => {
        throw new Error(
          `PostGIS is not installed on this PostgreSQL server (${error.message}); install it ` +
            `with \`apt-get install postgresql-15-postgis-3\` or use the postgis/postgis image`,
        )
      })
      const before = await lastAppliedMigration(sql)
      await migrate(drizzle(sql), { migrationsFolder: MIGRATIONS })
      await afterMigrations(sql, before)
      await applyRepeatable(sql)
    } finally {
      await sql`select pg_advisory_unlock(727001)`
    }
  } finally {
    await sql.end({ timeout: 1 })
  }
}

/**
 * Statements that must follow a migration outside its transaction, by migration tag. A migration
 * that rewrites a table leaves it without a visibility map, and no autovacuum comes for a table
 * that has no dead rows: every index-only scan of the catalogue then visited the heap (1M
 * listings: a sort by price went from 87 ms to 1.3 s p95) until it was vacuumed. The same holds
 * for a table a migration creates and fills.
 */
const AFTER_MIGRATION: Record<string, string[]> = {
  '0015_catalogue_doc_json': ['vacuum (analyze) catalogue_entries'],
  '0016_events_data_json': ['vacuum (analyze) events'],
  '0017_catalogue_covering_indexes': ['vacuum (analyze) catalogue_entries'],
  // A new table filled by the migration: its cell sums are index-only scans once it has a visibility map.
  '0023_catalogue_geo_cells': ['vacuum (analyze) catalogue_geo_cells'],
  // A new table filled by the migration: a list's walk of it is index-only once it has a visibility map, a search is planned from its statistics.
  '0032_catalogue_search_table': ['vacuum (analyze) catalogue_search'],
}

/** `created_at` of the newest applied migration (drizzle's bookkeeping), 0 before the first. */
async function lastAppliedMigration(sql: postgres.Sql): Promise<number> {
  const [{ exists }] = await sql<{ exists: boolean }[]>`select to_regclass('drizzle.__drizzle_migrations') is not null as exists`
  if (!exists) return 0
  const [row] = await sql<{ last: string | null }[]>`select max(created_at)::text as last from drizzle.__drizzle_migrations`
  return Number(row?.last ?? 0)
}

async function afterMigrations(sql: postgres.Sql, before: number): Promise<void> {
  const journal = JSON.parse(readFileSync(`${MIGRATIONS}/meta/_journal.json`, 'utf8')) as { entries: { tag: string; when: number }[] }
  for (const entry of journal.entries) {
    if (entry.when <= before) continue
    for (const statement of AFTER_MIGRATION[entry.tag] ?? []) await sql.unsafe(statement)
  }
}

/** The files of REPEATABLE in the order they are applied, each with its text and checksum. */
export function repeatableFiles(): { name: string; text: string; checksum: string }[] {
  return readdirSync(REPEATABLE)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => {
      const text = readFileSync(`${REPEATABLE}/${name}`, 'utf8')
      return { name, text, checksum: createHash('sha256').update(text).digest('hex') }
    })
}

/**
 * Flyway's repeatable migrations: after the versioned ones, each file of db/functions whose
 * checksum differs from the one recorded when it was last applied is run again, whole, in its own
 * transaction with the new checksum recorded. Its statements are CREATE OR REPLACE, so running
 * one again is harmless, and the database holds what the files say without a chain of migrations
 * to read.
 */
async function applyRepeatable(sql: postgres.Sql): Promise<void> {
  await sql`create table if not exists drizzle.repeatable_sql (name text primary key, checksum text not null, applied_at timestamptz not null default now())`
  const applied = new Map((await sql<{ name: string; checksum: string }[]>`select name, checksum from drizzle.repeatable_sql`).map((r) => [r.name, r.checksum]))
  const files = repeatableFiles()
  // A file renamed or removed leaves no record behind (what it defined is a migration's to drop).
  await sql`delete from drizzle.repeatable_sql where name <> all(${files.map((f) => f.name)}::text[])`
  for (const file of files) {
    if (applied.get(file.name) === file.checksum) continue
    await sql.begin(async (tx) => {
      await tx.unsafe(file.text).simple()
      await tx`insert into drizzle.repeatable_sql (name, checksum) values (${file.name}, ${file.checksum})
        on conflict (name) do update set checksum = excluded.checksum, applied_at = now()`
    })
  }
}
