/**
 * A multi-host DATABASE_URL on a real primary and synchronous standby of our own (never the
 * shared 5432): writes reach the primary even with the standby listed first, a query while no
 * host is a primary fails (503) instead of waiting, and after `kill -9` of the primary and the
 * standby's promotion the same pool writes again with nothing answered lost
 * (patches/README.md §6, docs/operations.md "Failover").
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDatabase, type Database } from '../../db/client'
import { isUnavailableError } from '../../shared/platform/unavailable'
import { PgTopology } from '../faults/pg-topology'
import { eventually } from '../helpers/eventually'

const root = mkdtempSync(join(tmpdir(), 'plm-multihost-'))
const topology = new PgTopology(root)
let database: Database

beforeAll(async () => {
  await topology.start(['multihost'])
  database = createDatabase(topology.multiHostUrl('multihost'), { max: 4 })
  await database.sql`create table t (id int primary key)`
}, 60_000)

afterAll(async () => {
  await database?.close(1).catch(() => {})
  await topology.stop()
  rmSync(root, { recursive: true, force: true })
})

const serverPort = async (db: Database) => (await db.sql<{ port: number }[]>`select inet_server_port() as port`)[0].port

describe('multi-host DATABASE_URL with target_session_attrs=read-write', () => {
  test('every pooled connection is on the primary, though the standby is listed first', async () => {
    // Each of the pool's four connections, held at once.
    const connections = await Promise.all(Array.from({ length: 4 }, () => database.sql.reserve()))
    try {
      for (const connection of connections) {
        const [row] = await connection<{ recovery: boolean; port: number }[]>`select pg_is_in_recovery() as recovery, inet_server_port() as port`
        expect(row).toMatchObject({ recovery: false, port: topology.primary.port })
      }
    } finally {
      for (const connection of connections) connection.release()
    }
    await database.sql`insert into t select generate_series(1, 100)`
  })

  test('after kill -9 of the primary: an unavailable error until the promotion, then the same pool writes on the new primary', async () => {
    topology.primary.kill9()
    // The standby refuses (in recovery) and the primary is gone: the query fails, it does not wait.
    const during = await database.sql`insert into t values (1000)`.then(
      () => undefined,
      (e) => e,
    )
    expect(isUnavailableError(during)).toBe(true)
    await topology.standby.promote()
    await eventually(async () => (await serverPort(database)) === topology.standby.port, {
      timeoutMs: 10_000,
      intervalMs: 100,
      what: 'the pool to reach the promoted standby',
    })
    await database.sql`insert into t values (1001)`
    // Synchronous commit: every row acknowledged by the old primary is on the new one.
    const [{ n }] = await database.sql<{ n: number }[]>`select count(*)::int as n from t where id <= 100`
    expect(n).toBe(100)
  }, 60_000)
})
