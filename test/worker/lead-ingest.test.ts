import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Queue, UnrecoverableError, type Job } from 'bullmq'
import postgres from 'postgres'
import { sql } from 'drizzle-orm'
import { buildIngestLead } from '../../shared/leads/ingest'
import { JOBS } from '../../shared/platform/jobs'
import { createLogger } from '../../shared/platform/logger'
import { redisConnection } from '../../shared/platform/queues'
import { processLeadIngest } from '../../worker/processors/lead-ingest'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type TestContext } from '../helpers/context'
import { contactsOf, ingestBody, uniquePhone } from '../helpers/leads'
import { relayAll } from '../helpers/relay'

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

const deps = () => ({ config: ctx.config, database: ctx.deps.database, queues: ctx.deps.queues, logger: ctx.deps.logger })
const run = (data: unknown) => processLeadIngest(deps(), { data } as Job)
const lead = (businessId: number, name: string, phone = uniquePhone()) =>
  buildIngestLead(businessId, { source: 'landing', sourcePage: 'https://example.com/', contact: { name, phone }, search: { budget: '900', habs: '1' } })

describe('lead-ingest processor', () => {
  test('inserts a batch in one go; running it twice changes nothing', async () => {
    const b = await seedBusiness(ctx)
    const leads = [lead(b.id, 'a'), lead(b.id, 'b'), lead(b.id, 'c')]
    expect(await run({ leads })).toEqual({ received: 3, created: 3 })
    const before = await contactsOf(ctx, b.id)
    expect(before.map((r) => r.name).sort()).toEqual(['a', 'b', 'c'])
    expect(await run({ leads })).toEqual({ received: 3, created: 0 })
    expect(await contactsOf(ctx, b.id)).toEqual(before)
  })

  test('created_at is the time the API accepted the lead', async () => {
    const b = await seedBusiness(ctx)
    const l = { ...lead(b.id, 'a'), receivedAt: '2026-01-02T03:04:05.678Z' }
    await run({ leads: [l] })
    const [row] = await contactsOf(ctx, b.id)
    expect(new Date(row.created_at).toISOString()).toBe('2026-01-02T03:04:05.678Z')
    expect(new Date(row.updated_at).toISOString()).toBe('2026-01-02T03:04:05.678Z')
  })

  test('within a batch the first lead of a phone wins; an existing lead is never updated', async () => {
    const b = await seedBusiness(ctx)
    const phone = uniquePhone()
    expect(await run({ leads: [lead(b.id, 'first', phone), lead(b.id, 'second', phone), lead(b.id, 'other')] })).toEqual({ received: 3, created: 2 })
    const before = (await contactsOf(ctx, b.id)).find((r) => r.phone === phone)
    expect(before.name).toBe('first')
    await run({ leads: [lead(b.id, 'third', phone)] })
    expect((await contactsOf(ctx, b.id)).find((r) => r.phone === phone)).toEqual(before)
  })

  test('jobs running at the same time share a transaction; each counts the leads it created first', async () => {
    const b = await seedBusiness(ctx)
    const shared = uniquePhone()
    const jobs = Array.from({ length: 12 }, (_, i) => ({ leads: [lead(b.id, `j${i}`), lead(b.id, `s${i}`, shared)] }))
    const results = await Promise.all(jobs.map((data) => run(data)))
    // The shared phone is created once, by the first job; every other lead once each.
    expect(results.map((r) => r.created)).toEqual([2, ...Array(11).fill(1)])
    const rows = await contactsOf(ctx, b.id)
    expect(rows.length).toBe(13)
    expect(rows.find((r) => r.phone === shared).name).toBe('s0')
    await relayAll(ctx.deps)
    const [{ events }] = await ctx.deps.database.sql<
      { events: number }[]
    >`select count(*)::int as events from events where business_id = ${b.id} and type = 'lead.created'`
    expect(events).toBe(13)
  })

  test('a batch may mix businesses; a deleted business’s leads are dropped, not retried forever', async () => {
    const b1 = await seedBusiness(ctx)
    const b2 = await seedBusiness(ctx)
    const gone = await seedBusiness(ctx)
    await ctx.deps.database.db.execute(sql`delete from businesses where id = ${gone.id}`)
    expect(await run({ leads: [lead(b1.id, 'x'), lead(gone.id, 'y'), lead(b2.id, 'z')] })).toEqual({ received: 3, created: 2 })
  })

  test('an invalid payload fails permanently', async () => {
    await expect(run({ leads: [] })).rejects.toBeInstanceOf(UnrecoverableError)
    await expect(run({ businessId: 1, lead: {} })).rejects.toThrow('invalid lead-ingest payload')
  })
})

describe('ingest through a real BullMQ worker', () => {
  let workers: RunningWorkers
  beforeAll(async () => {
    workers = await startWorkers(ctx.config, createLogger('silent'), ['lead-ingest'])
  })
  afterAll(() => workers.close())

  test('50 concurrent ingests of one phone make one lead, and duplicates never change the first', async () => {
    const b = await seedBusiness(ctx)
    const phone = uniquePhone()
    const first = await call(ctx.app, 'POST', '/v1/leads/ingest', {
      key: b.apiKey,
      body: ingestBody({ contact: { name: 'Primera', phone }, search: { budget: '700' } }),
    })
    expect(first.status, first.text).toBe(200)
    const original = await eventually(async () => (await contactsOf(ctx, b.id))[0], { what: 'the first lead' })
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(ctx.app, 'POST', '/v1/leads/ingest', {
          key: b.apiKey,
          body: ingestBody({ contact: { name: `Dup ${i}`, phone: i % 2 ? phone : phone.slice(3) }, search: { budget: String(1000 + i) } }),
        }),
      ),
    )
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200))
    await eventually(
      async () => {
        const counts = await ctx.deps.queues.get('lead-ingest').getJobCounts('waiting', 'active', 'delayed', 'prioritized')
        return Object.values(counts).every((n) => n === 0)
      },
      { what: 'an empty lead-ingest queue' },
    )
    expect(await contactsOf(ctx, b.id)).toEqual([original])
  })

  test('50 concurrent ingests of one new phone create exactly one lead', async () => {
    const b = await seedBusiness(ctx)
    const phone = uniquePhone()
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(ctx.app, 'POST', '/v1/leads/ingest', { key: b.apiKey, body: ingestBody({ contact: { name: `N${i}`, phone } }) }),
      ),
    )
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200))
    await eventually(async () => (await contactsOf(ctx, b.id)).length === 1, { what: 'one lead' })
    await eventually(
      async () => {
        const counts = await ctx.deps.queues.get('lead-ingest').getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed')
        return Object.values(counts).every((n) => n === 0)
      },
      { what: 'an empty lead-ingest queue' },
    )
    expect(await contactsOf(ctx, b.id)).toHaveLength(1)
  })

  test('many distinct leads from concurrent requests are all persisted, batched into few jobs', async () => {
    const b = await seedBusiness(ctx)
    const before = { ...ctx.deps.ingest.stats }
    const phones = Array.from({ length: 200 }, () => uniquePhone())
    const results = await Promise.all(
      phones.map((phone) => call(ctx.app, 'POST', '/v1/leads/ingest', { key: b.apiKey, body: ingestBody({ contact: { phone } }) })),
    )
    expect(results.every((r) => r.status === 200)).toBe(true)
    await eventually(async () => (await contactsOf(ctx, b.id)).length === new Set(phones).size, { what: '200 leads', timeoutMs: 15_000 })
    const batches = ctx.deps.ingest.stats.batches - before.batches
    expect(ctx.deps.ingest.stats.leads - before.leads).toBe(200)
    expect(batches).toBeLessThan(200)
    expect(ctx.deps.ingest.stats.fallbacks).toBe(before.fallbacks)
  })
})

describe('stopping a worker whose job cannot finish', () => {
  test('close() keeps to its bound, and the unfinished job is not lost: another worker stores it', async () => {
    const b = await seedBusiness(ctx)
    // Its own queue prefix: the workers of the tests above never take this job.
    const config = { ...ctx.config, queuePrefix: `${ctx.config.queuePrefix}-stop-${b.id}` }
    const connection = redisConnection(config, 'producer')
    const queue = new Queue('lead-ingest', { connection, prefix: config.queuePrefix })
    // The business row locked FOR UPDATE: the job's insert (its foreign key check) waits until released.
    const hold = postgres(config.databaseUrl, { max: 1, onnotice: () => {} })
    const { promise: released, resolve: release } = Promise.withResolvers<void>()
    const { promise: locked, resolve: lockTaken } = Promise.withResolvers<void>()
    const holding = hold.begin(async (tx) => {
      await tx`select id from businesses where id = ${b.id} for update`
      lockTaken()
      await released
    })
    let second: RunningWorkers | undefined
    try {
      await locked
      const first = await startWorkers(config, createLogger('silent'), ['lead-ingest'])
      const def = JOBS['lead-ingest']
      await queue.add(def.name, { leads: [lead(b.id, 'held')] }, def.options)
      await eventually(async () => (await queue.getJobCounts('active')).active === 1, { what: 'the job running' })
      const t0 = performance.now()
      await first.close(300)
      // The drain's 300 ms, then at most two CLOSE_MS (worker/runtime.ts) to close the connections.
      expect(performance.now() - t0).toBeLessThan(300 + 4000 + 500)
      expect(await queue.getJobCounts('active', 'completed', 'failed')).toEqual({ active: 1, completed: 0, failed: 0 })
      release()
      await holding
      // Its lock expires (lockDuration 10 s) and the stalled check of a new worker runs it again.
      second = await startWorkers(config, createLogger('silent'), ['lead-ingest'])
      await eventually(async () => (await contactsOf(ctx, b.id)).length === 1, { timeoutMs: 35_000, what: 'the job run again' })
      expect((await contactsOf(ctx, b.id)).map((r) => r.name)).toEqual(['held'])
    } finally {
      release()
      await holding.catch(() => {})
      await second?.close()
      await queue.obliterate({ force: true }).catch(() => {})
      await queue.close()
      connection.disconnect()
      await hold.end()
    }
  }, 60_000)
})
