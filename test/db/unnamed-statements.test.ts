/**
 * Unnamed statements (`prepare: false`, our setting for PgBouncer): every run of a query with
 * parameters is described first (Parse+Describe+Flush, then Bind+Execute+Sync), so a migration
 * that changes a column's type never fails a statement that ran before it. The driver keeps no
 * parameter types between runs: a cache of them (one round trip instead of two) failed the first
 * run after such a change, inside a transaction too, where nothing can retry it
 * (docs/performance.md "Unnamed statements").
 */
import { afterAll, describe, expect, test } from 'bun:test'
import net from 'node:net'
import postgres from 'postgres'
import { createDatabase } from '../../db/client'
import { inlineValues, queryInlinedRaw } from '../../db/inline-values'
import { queryCataloguePage } from '../../db/queries/catalogue/list'

const url = process.env.DATABASE_URL!
const { hostname, port } = new URL(url)
const opened: postgres.Sql[] = []
afterAll(() => Promise.all(opened.map((sql) => sql.end({ timeout: 1 }))))

/** A one-connection unnamed-statement pool recording the frontend messages it sends, by type. */
function recordingPool() {
  const sent: string[] = []
  const sql = postgres(url, {
    max: 1,
    prepare: false,
    onnotice: () => {},
    socket: () =>
      new Promise<net.Socket>((resolve, reject) => {
        const socket = net.connect(Number(port || 5432), hostname)
        const write = socket.write.bind(socket) as (chunk: Uint8Array, ...rest: unknown[]) => boolean
        let started = false
        socket.write = ((chunk: Uint8Array, ...rest: unknown[]) => {
          const bytes = Buffer.from(chunk)
          // The startup and SSL messages have no type byte; every later message is type + length.
          if (started) for (let at = 0; at < bytes.length; at += 1 + bytes.readUInt32BE(at + 1)) sent.push(String.fromCharCode(bytes[at]))
          started = true
          return write(chunk, ...rest)
        }) as typeof socket.write
        socket.once('connect', () => resolve(socket))
        socket.once('error', reject)
      }),
  } as postgres.Options<Record<string, never>> & { socket: () => Promise<net.Socket> })
  opened.push(sql)
  return { sql, sent }
}

describe('unnamed statements (prepare: false)', () => {
  test('every run of a statement with parameters is described first', async () => {
    const { sql, sent } = recordingPool()
    await sql`select 1`
    const run = () => sql`select ${41}::int + ${1} as answer, ${'text'} as label, ${[1, 2]}::int[] as list`
    for (let i = 0; i < 3; i++) {
      sent.length = 0
      expect([...(await run())]).toEqual([{ answer: 42, label: 'text', list: [1, 2] }])
      expect(sent).toEqual(['P', 'D', 'H', 'B', 'E', 'S'])
    }
  })

  test('concurrent statements on one connection all answer', async () => {
    const { sql } = recordingPool()
    const run = (i: number) => sql`select ${i}::int * 2 as double`
    await run(0)
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => run(i)))
    expect(answers.map(([row]) => row.double)).toEqual(Array.from({ length: 50 }, (_, i) => i * 2))
  })

  test("after a column's type changes, a statement that ran before succeeds at once, in a transaction too", async () => {
    const { sql } = recordingPool()
    const table = `unnamed_stale_${process.pid}`
    await sql.unsafe(`drop table if exists ${table}; create table ${table} (v text)`)
    try {
      await sql`insert into ${sql(table)} (v) values ('7')`
      const find = (q: postgres.Sql | postgres.TransactionSql = sql) => q`select count(*)::int as n from ${sql(table)} where v = ${'7'}`
      expect((await find())[0].n).toBe(1)
      await sql.unsafe(`alter table ${table} alter column v type int using v::int`)
      expect((await sql.begin((tx) => find(tx)))[0].n).toBe(1)
      expect((await find())[0].n).toBe(1)
    } finally {
      await sql.unsafe(`drop table if exists ${table}`)
    }
  })

  test('a cursor over a described statement still reads every batch', async () => {
    const { sql } = recordingPool()
    const query = (n: number) => sql`select g from generate_series(1, ${n}::int) g`
    await query(1)
    const seen: number[] = []
    for await (const rows of query(250).cursor(100)) seen.push(...rows.map((row) => row.g))
    expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => i + 1))
  })
})

describe('values written into the statement (db/inline-values.ts)', () => {
  const strings = ["o'brien", "\\' or 1=1 --", 'back\\slash', "'; drop table contacts; --", 'ñandú €', 'line\nbreak', '$1', '', '"quoted"']

  for (const conforming of ['on', 'off']) {
    test(`every string reads back as it was, standard_conforming_strings ${conforming}`, async () => {
      const { sql } = recordingPool()
      await sql.unsafe(`set standard_conforming_strings = ${conforming}`)
      for (const value of strings) {
        const statement = inlineValues('select $1::text as v, $2::int as n, $3::float8 as f, $4::boolean as b, $5::text as z', [value, -7, -3.5, true, null])
        expect(statement.params).toEqual([])
        expect([...(await sql.unsafe(statement.text))] as unknown[]).toEqual([{ v: value, n: -7, f: -3.5, b: true, z: null }])
      }
    })
  }

  test('a catalogue page goes in one round trip (Parse, Bind and Execute at once)', async () => {
    const { sql, sent } = recordingPool()
    await sql`select 1`
    sent.length = 0
    const page = await queryCataloguePage(sql as never, { businessId: -1, limit: 10, offset: 0, priceColumn: 'price_sale' })
    expect(page.count).toBe(0)
    expect(sent).toEqual(['P', 'D', 'B', 'E', 'S'])
  })
})

describe('an inlined statement is not pipelined (db/inline-values.ts queryInlinedRaw)', () => {
  test('it waits for a free connection instead of queueing behind a slow statement', async () => {
    const database = createDatabase(url, { max: 2 })
    try {
      await Promise.all([database.sql`select 1`, database.sql`select 2`])
      const order: string[] = []
      const run = (name: string, seconds: number) => queryInlinedRaw(database.sql, 'select pg_sleep($1)', [seconds]).then(() => order.push(name))
      const slow = run('slow', 1.5)
      const short = run('short', 0.2)
      // Both connections busy: pipelined, this would go behind one of them (the slow one first).
      const next = run('next', 0)
      await Promise.all([slow, short, next])
      expect(order).toEqual(['short', 'next', 'slow'])
    } finally {
      await database.close()
    }
  })

  test('in a transaction, statements still run in order on its connection', async () => {
    const database = createDatabase(url, { max: 2 })
    try {
      const rows = await database.sql.begin(async (tx) => {
        const all = await Promise.all([1, 2, 3].map((n) => queryInlinedRaw(tx as never, 'select $1::int as n', [n])))
        return all.map(([[n]]) => Number(String(n)))
      })
      expect(rows).toEqual([1, 2, 3])
    } finally {
      await database.close()
    }
  })
})
