/**
 * The API and the lead-ingest workers through a real PgBouncer in transaction pooling mode
 * (contract §14), in front of the shared PostgreSQL's test database, with 3 server
 * connections for 16 concurrent clients, so consecutive transactions of one client connection
 * land on different server backends. Every answered write must be in PostgreSQL afterwards, and
 * nothing may fail. With postgres.js's named prepared statements (its default) the same
 * workload answered 500/503 for writes, and before the COMMIT guard (patches/README.md §5) it
 * answered 201 for properties and leads that were not stored.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import postgres from 'postgres'
import { createDatabase } from '../../db/client'
import { createLogger } from '../../shared/platform/logger'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type TestContext } from '../helpers/context'
import { failedAnswers, missingWrites, runMixedWorkload } from '../helpers/mixed-workload'
import { PgBouncer } from '../helpers/pgbouncer'
import { freePort } from '../helpers/processes'

const directUrl = process.env.DATABASE_URL!
const database = decodeURIComponent(new URL(directUrl).pathname.slice(1))
let bouncer: PgBouncer
let ctx: TestContext
let workers: RunningWorkers
let direct: postgres.Sql

beforeAll(async () => {
  bouncer = new PgBouncer({ upstreamPort: Number(new URL(directUrl).port || 5432), poolSize: 3 })
  await bouncer.start()
  ctx = await createTestContext({ DATABASE_URL: bouncer.url(database), DATABASE_DIRECT_URL: directUrl, DB_POOL_SIZE: '16' })
  workers = await startWorkers(ctx.config, createLogger('silent'), ['lead-ingest'])
  direct = postgres(directUrl, { max: 2, onnotice: () => {} })
}, 60_000)

afterAll(async () => {
  await workers?.close(5000)
  await ctx?.close()
  await direct?.end({ timeout: 2 })
  await bouncer?.stop()
})

test('a concurrent mixed workload through PgBouncer (transaction mode): no failure, every answered write stored', async () => {
  const business = await seedBusiness(ctx)
  const result = await runMixedWorkload(
    async (_client, method, path, body) => {
      const res = await call(ctx.app, method, path, { key: business.apiKey, body })
      return { status: res.status, body: res.body }
    },
    { clients: 16, rounds: 6, tag: `pgbouncer-${process.pid}`, phoneBase: (process.pid % 5000) * 10_000 },
  )

  await eventually(
    async () => {
      const c = await ctx.deps.queues.get('lead-ingest').getJobCounts('waiting', 'active', 'delayed', 'prioritized')
      return c.waiting + c.active + c.delayed + c.prioritized === 0
    },
    { timeoutMs: 30_000, what: 'the lead-ingest queue to drain' },
  )

  expect(failedAnswers(result)).toEqual([])
  expect(await missingWrites(direct, result)).toEqual({ properties: 0, published: 0, patched: 0, leads: 0, ingests: 0, total: 0 })
  expect(result.created.length).toBe(16 * 6)
  expect(result.ingestPhones.length).toBe(16 * 6)
  // The workload went through the pooler, on at most its 3 server connections.
  const pool = (await bouncer.show('pools')).find((p) => p.database === database)
  expect(pool).toBeDefined()
  expect(await bouncer.serverConnections(database)).toBeLessThanOrEqual(3)
  const stats = (await bouncer.show('stats')).find((s) => s.database === database)
  expect(Number(stats?.total_xact_count)).toBeGreaterThan(16 * 6 * 4)
}, 120_000)

test('LISTEN takes its connection from DATABASE_DIRECT_URL, never the pooled URL', async () => {
  // The pooled URL leads nowhere: a LISTEN made through it could not succeed.
  const database = createDatabase(`postgres://postgres@127.0.0.1:${await freePort()}/nowhere`, { max: 1, directUrl })
  const received: string[] = []
  try {
    const { unlisten } = await database.listen('pgbouncer_test_direct', (payload) => received.push(payload))
    await direct`select pg_notify('pgbouncer_test_direct', 'hello')`
    await eventually(async () => received.includes('hello'), { what: 'the notification' })
    await unlisten()
  } finally {
    await database.close(1)
  }
})
