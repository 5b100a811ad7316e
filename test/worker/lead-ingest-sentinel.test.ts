/**
 * Rental ingest on Redis Sentinel (contract §14): the API and the workers find the master through
 * the sentinels, answer an ingest only once a replica holds its job (WAIT) or PostgreSQL holds the
 * lead, and follow a failover without a restart. A PRIVATE master, replica and three sentinels on
 * free ports; never the shared Redis.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import IORedis from 'ioredis'
import { buildIngestLead } from '../../shared/leads/ingest'
import { ReplicaAck } from '../../shared/platform/replica-ack'
import { createLogger } from '../../shared/platform/logger'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { contactsOf, ingestBody, uniquePhone } from '../helpers/leads'
import { SentinelTopology } from '../helpers/redis-sentinel'
import { relayAll } from '../helpers/relay'

const dir = mkdtempSync(join(tmpdir(), 'plm-sentinel-test-'))
let topology: SentinelTopology
let ctx: TestContext
let biz: SeededBusiness
let workers: RunningWorkers | undefined

beforeAll(async () => {
  topology = await SentinelTopology.start(dir)
  ctx = await createTestContext({ ...topology.env, REDIS_WAIT_TIMEOUT_MS: '200', INGEST_ENQUEUE_TIMEOUT_MS: '1500' })
  biz = await seedBusiness(ctx)
}, 30_000)
afterAll(async () => {
  await workers?.close(5000)
  await ctx?.close()
  await topology?.stop()
  rmSync(dir, { recursive: true, force: true })
}, 30_000)

const ingest = (phone: string) => call(ctx.app, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody({ contact: { name: 'Lucía', phone } }) })
const queueIdle = async () =>
  Object.values(await ctx.deps.queues.get('lead-ingest').getJobCounts('waiting', 'active', 'delayed', 'prioritized')).every((n) => n === 0)
const leadCreatedEvents = async (phone: string) => {
  await relayAll(ctx.deps)
  const rows = await ctx.deps.database.db.execute(
    sql`select count(*)::int as n from events where business_id = ${biz.id} and type = 'lead.created' and data->'object'->>'phone' = ${phone}`,
  )
  return Number((rows as unknown as { n: number }[])[0].n)
}

describe('rental ingest through Redis Sentinel', () => {
  test('with Sentinel configured an ingest waits for one replica by default', () => {
    expect(ctx.config.redisSentinel?.sentinels).toHaveLength(3)
    expect(ctx.config.redisWait).toEqual({ replicas: 1, timeoutMs: 200 })
  })

  test('the replica acknowledges: the batch is queued, not stored directly, and the job is on the replica', async () => {
    const fallbacks = ctx.deps.ingest.stats.fallbacks
    const res = await ingest(uniquePhone())
    expect(res.status, res.text).toBe(200)
    expect(ctx.deps.ingest.stats.fallbacks).toBe(fallbacks)
    const replica = new IORedis(topology.replicas[0].port, '127.0.0.1')
    try {
      expect(await replica.llen(`${ctx.config.queuePrefix}:lead-ingest:wait`)).toBeGreaterThan(0)
    } finally {
      replica.disconnect()
    }
  })

  test('the replica silent: the lead is in PostgreSQL when the answer arrives, and the job left in Redis adds nothing', async () => {
    const phone = uniquePhone()
    const fallbacks = ctx.deps.ingest.stats.fallbacks
    topology.replicas[0].proc!.kill('SIGSTOP')
    let res: Awaited<ReturnType<typeof ingest>>
    try {
      res = await ingest(phone)
    } finally {
      topology.replicas[0].proc!.kill('SIGCONT')
    }
    expect(res.status, res.text).toBe(200)
    expect(ctx.deps.ingest.stats.fallbacks).toBe(fallbacks + 1)
    const [stored] = (await contactsOf(ctx, biz.id)).filter((r) => r.phone === phone)
    expect(stored).toMatchObject({ phone, name: 'Lucía' })
    // The same batch is also a job on the master: the worker's insert of it is a no-op.
    expect(await queueIdle()).toBe(false)
    workers = await startWorkers(ctx.config, createLogger('silent'), ['lead-ingest'])
    await eventually(queueIdle, { what: 'the queued copy of the batch processed', timeoutMs: 15_000 })
    expect((await contactsOf(ctx, biz.id)).filter((r) => r.phone === phone)).toEqual([stored])
    expect(await leadCreatedEvents(phone)).toBe(1)
  })

  test('one WAIT covers the writes of many callers at once, on the ingest connection only', async () => {
    expect(ctx.deps.ingestQueues).not.toBe(ctx.deps.queues)
    const master = new IORedis(topology.master.port, '127.0.0.1')
    const waits = async () => Number(/cmdstat_wait:calls=(\d+)/.exec(await master.info('commandstats'))?.[1] ?? 0)
    try {
      const before = await waits()
      const ack = new ReplicaAck(master, 1, 1000)
      await Promise.all(Array.from({ length: 50 }, (_, i) => master.set(`${ctx.config.queuePrefix}:ack-test:${i}`, 'x').then(() => ack.acknowledged())))
      // The first caller's WAIT, then one shared by the 49 answered while it ran.
      expect((await waits()) - before).toBeLessThanOrEqual(2)
    } finally {
      master.disconnect()
    }
  })

  test('kill -9 of the master: the sentinels promote the replica; API and worker follow it without a restart', async () => {
    await topology.untilReplicasOnline()
    const oldMaster = topology.master.port
    await topology.kill(topology.master)
    // While no master is known, ingests are still answered: PostgreSQL takes the batches.
    const during = uniquePhone()
    expect((await ingest(during)).status).toBe(200)
    await eventually(async () => (await topology.currentMasterPort()) === topology.replicas[0].port, {
      what: `promotion of the replica (old master ${oldMaster})`,
      timeoutMs: 30_000,
      intervalMs: 200,
    })
    await eventually(async () => (await call(ctx.app, 'GET', '/readyz')).status === 200, {
      what: '/readyz after the failover',
      timeoutMs: 15_000,
      intervalMs: 100,
      get detail() {
        return `connection ${ctx.deps.redis.status}`
      },
    })
    expect(await ctx.deps.redis.call('ROLE').then((r) => (r as string[])[0])).toBe('master')
    // The new master has no replica yet: the answer still waits for PostgreSQL, never for nothing.
    const after = uniquePhone()
    expect((await ingest(after)).status).toBe(200)
    // The worker's queue runs on the new master: a job put there directly is consumed.
    const queued = uniquePhone()
    await ctx.deps.queues.enqueue('lead-ingest', {
      leads: [buildIngestLead(biz.id, ingestBody({ contact: { name: 'Tras la promoción', phone: queued } }) as never)],
    })
    await eventually(async () => (await contactsOf(ctx, biz.id)).some((r) => r.phone === queued), {
      what: 'a job on the new master stored by the worker',
      timeoutMs: 20_000,
    })
    const phones = (await contactsOf(ctx, biz.id)).map((r) => r.phone)
    for (const p of [during, after, queued]) expect(phones.filter((x) => x === p)).toHaveLength(1)
  }, 60_000)
})
