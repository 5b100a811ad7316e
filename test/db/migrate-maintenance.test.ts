/**
 * A migration that rewrites a table is followed, outside its transaction, by the statements it
 * needs (db/migrate.ts AFTER_MIGRATION): catalogue_entries is vacuumed after 0015, so its
 * index-only scans do not visit the heap. In a database of its own, dropped at the end.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import postgres from 'postgres'
import { migrateDatabase } from '../../db/migrate'
import { withDatabase } from '../../db/connection-url'
import { getConfig } from '../../shared/platform/config'

const name = `property_lead_migrate_${process.pid}_${Date.now()}`
const url = withDatabase(getConfig().databaseUrl, name)
const admin = postgres(withDatabase(getConfig().databaseUrl, 'postgres'), { max: 1, onnotice: () => {} })

afterAll(async () => {
  await admin.unsafe(`drop database if exists "${name}" with (force)`)
  await admin.end()
})

describe('migrations', () => {
  test('catalogue_entries is vacuumed when the migration that rewrites it is applied, and only then', async () => {
    await migrateDatabase(url)
    const sql = postgres(url, { max: 1, onnotice: () => {} })
    try {
      const vacuumedAt = async () =>
        (await sql<{ at: Date | null }[]>`select last_vacuum as at from pg_stat_user_tables where relname = 'catalogue_entries'`)[0].at
      const first = await vacuumedAt()
      expect(first).not.toBeNull()
      // Nothing left to apply: no vacuum again.
      await migrateDatabase(url)
      expect(await vacuumedAt()).toEqual(first)
    } finally {
      await sql.end()
    }
  })
})
