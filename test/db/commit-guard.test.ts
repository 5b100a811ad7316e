/**
 * A transaction resolves only when PostgreSQL answered its COMMIT with the tag `COMMIT`
 * (architecture: "A success answer means committed"). An aborted transaction's COMMIT is answered
 * `ROLLBACK` without an error; postgres.js retries a statement whose cached prepared statement
 * vanished (26000: a `DEALLOCATE ALL`, or a transaction-mode pooler that moved the client to
 * another backend) inside the aborted transaction, so unguarded the transaction resolved and the
 * caller answered 2xx for a write that was never stored.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql as raw } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import { isUnavailableError } from '../../shared/platform/unavailable'

const table = `commit_guard_${process.pid}_${Date.now()}`
// One connection, so every statement below shares the backend whose prepared statements are
// dropped; named statements (the driver's default), which db/client.ts turns off: the guard must
// hold wherever they are on.
const client = postgres(process.env.DATABASE_URL!, { max: 1, prepare: true, onnotice: () => {} })
const database = { sql: client, db: drizzle(client) }
beforeAll(async () => {
  await database.sql.unsafe(`create table ${table} (v text not null)`)
})
afterAll(async () => {
  await database.sql.unsafe(`drop table if exists ${table}`)
  await client.end({ timeout: 5 })
})

const count = async (v: string) => (await database.sql.unsafe(`select count(*)::int as n from ${table} where v = $1`, [v]))[0].n as number

test('a transaction whose COMMIT is answered ROLLBACK rejects, and nothing is stored', async () => {
  // A first transaction caches the driver's named statement for `commit` on the connection.
  await database.db.transaction(async (tx) => {
    await tx.execute(raw`select 1`)
  })
  const outcome = database.db.transaction(async (tx) => {
    await tx.execute(raw.raw(`insert into ${table} (v) values ('lost')`))
    // What a pooler does between two transactions of one client: the named statements are gone.
    await tx.execute(raw`deallocate all`)
  })
  const error = await outcome.then(
    () => undefined,
    (e) => e as { code?: string },
  )
  expect(await count('lost')).toBe(0)
  expect(error?.code).toBe('COMMIT_ROLLED_BACK')
  // Answered 503 (retry is safe: nothing was written), never 2xx.
  expect(isUnavailableError(error)).toBe(true)
})

test('a transaction that commits resolves with its result', async () => {
  const result = await database.db.transaction(async (tx) => {
    await tx.execute(raw.raw(`insert into ${table} (v) values ('kept')`))
    return 'done'
  })
  expect(result).toBe('done')
  expect(await count('kept')).toBe(1)
})
