/**
 * Exhausted jobs, ingest: a `lead-ingest` job carries leads nobody else holds, so it never exhausts
 * while PostgreSQL is unreachable: it waits with backoff, without using up its attempts, and the
 * wait is counted in Redis (`/metrics`: queue_job_unavailable_waits_total) and logged at error
 * level. Before, an outage longer than its backoff (~8.5 min with the catalog's 10 attempts from
 * 1 s) left answered leads only in failed jobs, purged after 7 days. A private PostgreSQL cluster
 * is stopped and started; the shared one is never touched. Small backoffs come from job options.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { JobsOptions } from 'bullmq'
import fc from 'fast-check'
import postgres from 'postgres'
import { renderQueueMetrics } from '../../api/metrics'
import { migrateDatabase } from '../../db/migrate'
import { buildIngestLead } from '../../shared/leads/ingest'
import { loadConfig, type Config } from '../../shared/platform/config'
import { JOBS, type JobKind } from '../../shared/platform/jobs'
import { createLogger } from '../../shared/platform/logger'
import { queueFigures } from '../../shared/platform/queue-stats'
import { Queues, redisConnection } from '../../shared/platform/queues'
import { unavailableRetryDelayMs } from '../../worker/queue-config'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { PgCluster } from '../faults/cluster'
import { eventually } from '../helpers/context'
import { uniquePhone } from '../helpers/leads'

/** The catalog's ingest options, but three quick attempts: before, an outage of a second exhausted them. */
const QUICK: Partial<Record<JobKind, JobsOptions>> = { 'lead-ingest': { attempts: 3, backoff: { type: 'exponential', delay: 10 } } }

let root: string
let cluster: PgCluster
let config: Config
let queues: Queues
let workers: RunningWorkers | undefined
const logs: string[] = []

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ingest-pg-outage-'))
  // The cluster runs as the postgres user (PgCluster): it must reach its directory inside this one.
  chmodSync(root, 0o755)
  cluster = new PgCluster(root)
  await cluster.init()
  await cluster.start()
  await migrateDatabase(cluster.url)
  config = loadConfig({ ...process.env, DATABASE_URL: cluster.url, QUEUE_PREFIX: `test-${crypto.randomUUID().slice(0, 8)}` })
  const producer = redisConnection(config.redisUrl, 'producer')
  producer.on('error', () => {})
  queues = new Queues(producer, config.queuePrefix, { jobOptions: QUICK })
  workers = await startWorkers(
    config,
    createLogger('debug', {}, (l) => logs.push(l)),
    ['lead-ingest'],
    { jobOptions: QUICK },
  )
}, 120_000)
afterAll(async () => {
  await workers?.close(5000).catch(() => {})
  const keys = await queues.connection.keys(`${config.queuePrefix}:*`).catch(() => [] as string[])
  if (keys.length) await queues.connection.del(...keys).catch(() => {})
  await queues?.close().catch(() => {})
  queues?.connection.disconnect()
  await cluster?.stop().catch(() => {})
  rmSync(root, { recursive: true, force: true })
}, 60_000)

async function privateSql<T>(fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(cluster.url, { max: 1, onnotice: () => {} })
  try {
    return await fn(sql)
  } finally {
    await sql.end({ timeout: 2 })
  }
}

describe('lead-ingest while PostgreSQL is down', () => {
  test('accepted batches wait out the outage (counted and logged), never fail, and are stored once it is back', async () => {
    const [{ id: businessId }] = await privateSql((sql) => sql<{ id: number }[]>`insert into businesses (name) values ('Outage') returning id`)
    await cluster.stop()
    const phones = Array.from({ length: 5 }, () => uniquePhone())
    for (const phone of phones) {
      await queues.enqueue('lead-ingest', {
        leads: [
          buildIngestLead(businessId, { source: 'landing', sourcePage: 'https://example.com/', contact: { name: 'Lucía', phone }, search: { budget: '900' } }),
        ],
      })
    }
    const q = queues.get('lead-ingest')
    // Far more tries than the jobs' 3 attempts, and none of them failed.
    await eventually(
      async () => {
        const [figures] = await queueFigures(queues, ['lead-ingest'])
        return figures.waits.unavailable >= 30
      },
      { what: 'ingest jobs to keep waiting for PostgreSQL', timeoutMs: 30_000 },
    )
    expect(await q.getFailedCount()).toBe(0)
    const jobs = await q.getJobs(['delayed', 'waiting', 'active'])
    expect(jobs.length).toBe(5)
    for (const job of jobs) expect(job.attemptsMade).toBe(0)
    expect(logs.some((l) => l.includes('"level":"error"') && l.includes('PostgreSQL unreachable'))).toBe(true)
    expect(await renderQueueMetrics(queues)).toMatch(/^queue_job_unavailable_waits_total\{queue="lead-ingest"\} [1-9]\d*$/m)

    await cluster.start()
    await eventually(
      async () => {
        const rows = await privateSql((sql) => sql<{ phone: string }[]>`select phone from contacts where business_id = ${businessId}`)
        return rows.length === phones.length
      },
      { what: 'the leads to be stored after the outage', timeoutMs: 30_000 },
    )
    expect(await q.getFailedCount()).toBe(0)
    expect(logs.some((l) => l.includes('PostgreSQL reachable again'))).toBe(true)
  }, 120_000)

  test('an invalid payload still fails at once, and is kept until an operator acts', async () => {
    const job = await queues.get('lead-ingest').add('lead.ingest', { leads: [] }, { ...JOBS['lead-ingest'].options })
    await eventually(async () => (await job.getState()) === 'failed', { what: 'the invalid job to fail' })
    expect((await queues.get('lead-ingest').getJob(job.id!))?.failedReason).toContain('invalid lead-ingest payload')
    for (const kind of Object.keys(JOBS) as JobKind[]) expect(JOBS[kind].options.removeOnFail).toBe(false)
  })

  test("the wait between tries grows from the job's backoff and is capped at 30 s", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 60_000 }), (n, base) => {
        const wait = unavailableRetryDelayMs(n, base)
        expect(wait).toBeGreaterThanOrEqual(Math.min(base, 30_000))
        expect(wait).toBeLessThanOrEqual(30_000)
        expect(unavailableRetryDelayMs(n + 1, base)).toBeGreaterThanOrEqual(wait)
      }),
    )
    expect(unavailableRetryDelayMs(1, 1000)).toBe(1000)
    expect(unavailableRetryDelayMs(4, 1000)).toBe(8000)
  })
})
