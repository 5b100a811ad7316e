/**
 * The catalogue's functions and triggers have one current definition each, in db/functions/
 * (conventions.md 15): the database holds exactly the ones those files define, as they define
 * them, and the migrator applies a file again whenever it changes (Flyway's repeatable migrations).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import postgres from 'postgres'
import { migrateDatabase, repeatableFiles } from '../../db/migrate'

let sql: postgres.Sql

beforeAll(() => {
  sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
})
afterAll(() => sql.end({ timeout: 2 }))

const files = repeatableFiles()
const declared = (kind: 'FUNCTION' | 'TRIGGER') =>
  files.flatMap((f) => [...f.text.matchAll(new RegExp(`^CREATE OR REPLACE ${kind} (\\w+)`, 'gm'))].map((m) => m[1])).sort()

/** Every catalogue function's and trigger's definition as the server prints it, by name. */
async function definitions(db: postgres.Sql | postgres.TransactionSql): Promise<Record<string, string>> {
  const functions = await db<{ name: string; def: string }[]>`
    select p.proname as name, pg_get_functiondef(p.oid) as def from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'public' and p.proname like 'catalogue\\_%' order by 1`
  const triggers = await db<{ name: string; def: string }[]>`
    select t.tgname as name, pg_get_triggerdef(t.oid) as def from pg_trigger t
    where not t.tgisinternal
      and t.tgrelid in ('catalogue_entries'::regclass, 'catalogue_counts'::regclass, 'catalogue_price_counts'::regclass, 'catalogue_geo_cells'::regclass)
    order by 1`
  return Object.fromEntries([...functions.map((f) => [`function ${f.name}`, f.def]), ...triggers.map((t) => [`trigger ${t.name}`, t.def])])
}

describe('db/functions holds the one definition of every catalogue function and trigger', () => {
  test('the database has exactly the functions and triggers the files define, no other', async () => {
    const held = Object.keys(await definitions(sql))
    expect(
      held
        .filter((k) => k.startsWith('function '))
        .map((k) => k.slice(9))
        .sort(),
    ).toEqual(declared('FUNCTION'))
    expect(
      held
        .filter((k) => k.startsWith('trigger '))
        .map((k) => k.slice(8))
        .sort(),
    ).toEqual(declared('TRIGGER'))
    expect(declared('FUNCTION').length).toBeGreaterThan(20)
  })

  test('each definition is the file’s: applying the files again changes nothing', async () => {
    const before = await definitions(sql)
    const after = await sql
      .begin(async (tx) => {
        for (const file of files) await tx.unsafe(file.text).simple()
        const defs = await definitions(tx)
        throw Object.assign(new Error('rollback'), { defs })
      })
      .catch((error: { defs?: Record<string, string> }) => {
        if (!error.defs) throw error
        return error.defs
      })
    expect(after).toEqual(before)
  })

  test('a file is applied again when its checksum differs from the one recorded, and only then', async () => {
    const [first] = files
    await sql`update drizzle.repeatable_sql set checksum = 'stale', applied_at = '2000-01-01' where name = ${first.name}`
    await migrateDatabase(process.env.DATABASE_URL!)
    const rows = await sql<{ name: string; checksum: string; applied_at: Date }[]>`select name, checksum, applied_at from drizzle.repeatable_sql order by name`
    expect(rows.map((r) => [r.name, r.checksum])).toEqual(files.map((f) => [f.name, f.checksum]))
    const again = rows.find((r) => r.name === first.name)!
    expect(again.applied_at.getTime()).toBeGreaterThan(new Date('2001-01-01').getTime())
    await migrateDatabase(process.env.DATABASE_URL!)
    const [unchanged] = await sql<{ applied_at: Date }[]>`select applied_at from drizzle.repeatable_sql where name = ${first.name}`
    expect(unchanged.applied_at).toEqual(again.applied_at)
  })
})
