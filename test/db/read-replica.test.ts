/**
 * ReadRouter on a real primary and a replica of our own that applies WAL 1 s late (never the
 * shared 5432), with the markers in the shared Redis under a prefix of this file: a read after a
 * write is served by the primary until the replica has replayed it, then by the replica; a
 * replica that stops answering is bypassed (docs/operations.md "Read replica").
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDatabase, type Database } from '../../db/client'
import { createLogger } from '../../shared/platform/logger'
import { redisConnection } from '../../shared/platform/queues'
import { ReadRouter } from '../../shared/platform/read-replica'
import { until } from '../faults/cluster'
import { PgTopology } from '../faults/pg-topology'

const root = mkdtempSync(join(tmpdir(), 'plm-replica-'))
const topology = new PgTopology(root, { applyDelayMs: 1000, synchronous: false })
const prefix = `test-ryw-${randomBytes(4).toString('hex')}`
const redis = redisConnection(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'producer')
let primary: Database
let replica: Database
let router: ReadRouter

beforeAll(async () => {
  await topology.start(['replica_test'])
  primary = createDatabase(topology.primary.url('replica_test'), { max: 2 })
  replica = createDatabase(topology.standby.url('replica_test'), { max: 2 })
  await primary.sql`create table t (business int, v int)`
  router = new ReadRouter({ primary, replica, redis, keyPrefix: prefix, maxLagMs: 5000, logger: createLogger('silent') })
  router.start()
  await until('the table on the replica', async () => (await replica.sql`select 1 from pg_tables where tablename = 't'`).length > 0, 20_000)
}, 60_000)

afterAll(async () => {
  router?.stop()
  const keys = await redis.keys(`${prefix}:*`)
  if (keys.length) await redis.del(...keys)
  redis.disconnect()
  await Promise.all([primary?.close(1), replica?.close(1)])
  await topology.stop()
  rmSync(root, { recursive: true, force: true })
})

const valuesOf = (businessId: number) =>
  router.read(businessId, async (db) => ({
    on: (await db.sql<{ recovery: boolean }[]>`select pg_is_in_recovery() as recovery`)[0].recovery ? 'replica' : 'primary',
    values: (await db.sql<{ v: number }[]>`select v from t where business = ${businessId} order by v`).map((r) => r.v),
  }))

describe('ReadRouter on a replica applying 1 s late', () => {
  test('a read after a write is on the primary and sees it; once replayed, the replica serves it', async () => {
    await primary.sql`insert into t values (1, 10)`
    await router.noteWrite(1)
    const first = await valuesOf(1)
    expect(first).toEqual({ on: 'primary', values: [10] })
    // The replica itself does not have it yet: the routing, not luck, made the read fresh.
    expect((await replica.sql`select v from t where business = 1`).length).toBe(0)
    const later = await until(
      'the replica to serve business 1',
      async () => {
        const r = await valuesOf(1)
        return r.on === 'replica' ? r : undefined
      },
      20_000,
      50,
    )
    expect(later.values).toEqual([10])
  }, 30_000)

  test('another business with no recent write reads from the replica meanwhile', async () => {
    await primary.sql`insert into t values (1, 11)`
    await router.noteWrite(1)
    await until('the replica status to be fresh', async () => (await valuesOf(2)).on === 'replica', 10_000, 50)
    expect((await valuesOf(1)).values).toEqual([10, 11])
    expect(router.renderMetrics()).toMatch(/db_reads_total\{target="primary",reason="own-write"\} [1-9]/)
    expect(router.renderMetrics()).toMatch(/db_reads_total\{target="replica",reason="replica"\} [1-9]/)
  }, 30_000)

  test('a replica that stops is bypassed: reads go on, on the primary', async () => {
    await topology.standby.stop()
    for (let i = 0; i < 5; i++) expect((await valuesOf(2)).on).toBe('primary')
    expect(router.renderMetrics()).toMatch(/db_reads_total\{target="primary",reason="(down|unchecked)"\} [1-9]/)
  }, 30_000)
})
