import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { UnrecoverableError, type Job } from 'bullmq'
import { sql } from 'drizzle-orm'
import { buildIngestLead } from '../../shared/leads/ingest'
import { createLogger } from '../../shared/platform/logger'
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
