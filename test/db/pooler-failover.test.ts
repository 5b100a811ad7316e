/**
 * A multi-host DATABASE_URL over a PgBouncer per node (transaction mode), on a primary and
 * synchronous standby of our own (never the shared 5432). PgBouncer replays the parameters of its
 * first server login to every new client, so after a failover it reports the promoted node in hot
 * standby and the dead one as a primary; the driver asks each new connection's live state instead
 * (patches/README.md §7, docs/operations.md "Failover"). After `kill -9` of the primary and the
 * standby's promotion the same pool writes again, every failure meanwhile is an unavailable error
 * (a 503), and nothing acknowledged is lost.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { createDatabase, type Database } from '../../db/client'
import { isUnavailableError } from '../../shared/platform/unavailable'
import { PgTopology } from '../faults/pg-topology'
import { eventually } from '../helpers/eventually'
import { PgBouncer } from '../helpers/pgbouncer'

const DB = 'poolerfailover'
const root = mkdtempSync(join(tmpdir(), 'plm-pooler-failover-'))
const topology = new PgTopology(root)
const bouncers: PgBouncer[] = []
let database: Database

/** The URL an operator writes: the PgBouncers of both nodes, the primary's first. */
const url = () => `postgres://postgres@127.0.0.1:${bouncers[0].port},127.0.0.1:${bouncers[1].port}/${DB}?target_session_attrs=read-write`
const codeOf = (e: unknown) => String((e as { code?: unknown }).code)

beforeAll(async () => {
  await topology.start([DB])
  for (const node of [topology.primary, topology.standby]) {
    const bouncer = new PgBouncer({ upstreamPort: node.port, poolSize: 4, queryWaitTimeoutSeconds: 5 })
    await bouncer.start()
    bouncers.push(bouncer)
  }
  database = createDatabase(url(), { max: 4 })
  await database.sql`create table t (id int primary key)`
}, 60_000)

afterAll(async () => {
  await database?.close(1).catch(() => {})
  for (const bouncer of bouncers) await bouncer.stop().catch(() => {})
  await topology.stop()
  rmSync(root, { recursive: true, force: true })
})

/** The PostgreSQL node behind a connection (PgBouncer forwards the query to it). */
const serverPort = async (sql: postgres.Sql | postgres.ReservedSql) => (await sql<{ port: number }[]>`select inet_server_port() as port`)[0].port

describe('multi-host DATABASE_URL over a PgBouncer per node', () => {
  test('before any fault every pooled connection is on the primary, through its PgBouncer', async () => {
    const connections = await Promise.all(Array.from({ length: 4 }, () => database.sql.reserve()))
    try {
      for (const connection of connections) expect(await serverPort(connection)).toBe(topology.primary.port)
    } finally {
      for (const connection of connections) connection.release()
    }
    await database.sql`insert into t select generate_series(1, 100)`
  })

  test('a connection that meets a read-only transaction (a demoted node) is closed: the next query asks the live state again', async () => {
    const single = createDatabase(url(), { max: 1 })
    const admin = postgres(topology.primary.url(DB), { max: 1, onnotice: () => {} })
    try {
      await single.sql`select 1`
      await admin.unsafe('alter system set default_transaction_read_only = on')
      await admin`select pg_reload_conf()`
      const refused = await eventually(
        async () =>
          single.sql`insert into t values (-1)`.then(
            () => undefined,
            (e) => codeOf(e) === '25006' && e,
          ),
        { timeoutMs: 10_000, what: 'the write to meet the read-only setting' },
      )
      expect(isUnavailableError(refused)).toBe(true)
      // Kept open, the connection would meet 25006 again; a new one finds no read-write host.
      const next = await single.sql`insert into t values (-2)`.then(
        () => undefined,
        (e) => e,
      )
      expect(codeOf(next)).toBe('TARGET_SESSION_ATTRS')
      expect(isUnavailableError(next)).toBe(true)
    } finally {
      await admin.unsafe('alter system reset default_transaction_read_only')
      await admin`select pg_reload_conf()`
      await admin.end({ timeout: 2 })
    }
    await eventually(
      async () =>
        single.sql`insert into t values (-3)`.then(
          () => true,
          () => false,
        ),
      { timeoutMs: 10_000, what: 'writes on the primary again' },
    )
    await single.close(1)
  }, 30_000)

  test('after kill -9 of the primary and the promotion: unavailable errors only, ' +
    'then the same pool writes on the new primary, nothing acknowledged lost', async () => {
    // The pool's idle connections are on the primary's PgBouncer, which keeps them open after its server died.
    const acknowledged = Array.from({ length: 100 }, (_, i) => i + 1)
    const failures: unknown[] = []
    let next = 1000
    const write = async () => {
      const id = next++
      try {
        await database.sql`insert into t values (${id})`
        acknowledged.push(id)
        return true
      } catch (error) {
        failures.push(error)
        return false
      }
    }
    topology.primary.kill9()
    // Until the promotion no host is usable: each write fails, none waits.
    expect(await write()).toBe(false)
    await topology.standby.promote()
    await eventually(write, { timeoutMs: 10_000, intervalMs: 50, what: 'a write to succeed after the promotion' })
    // Every connection of the pool now reaches the promoted node, through its PgBouncer.
    await Promise.all(Array.from({ length: 20 }, write))
    const connections = await Promise.all(Array.from({ length: 4 }, () => database.sql.reserve()))
    try {
      for (const connection of connections) expect(await serverPort(connection)).toBe(topology.standby.port)
    } finally {
      for (const connection of connections) connection.release()
    }
    expect([...(await database.sql`select 1 as ok`)]).toEqual([{ ok: 1 }]) // what /readyz asks
    const notUnavailable = failures.filter((e) => !isUnavailableError(e)).map((e) => `${codeOf(e)} ${String(e)}`)
    expect(notUnavailable).toEqual([])
    // Synchronous commit: every write acknowledged before or after the kill is on the new primary.
    const direct = postgres(topology.standby.url(DB), { max: 1, onnotice: () => {} })
    try {
      const rows = await direct<{ id: number }[]>`select id from t where id = any(${acknowledged}::int[])`
      expect(rows.length).toBe(acknowledged.length)
    } finally {
      await direct.end({ timeout: 2 })
    }
  }, 60_000)
})
