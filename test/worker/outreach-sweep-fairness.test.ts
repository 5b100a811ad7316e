/**
 * The outreach sweep does not starve. One business's thousands of
 * due deliveries cannot keep another business's delivery out of a sweep run, deliveries waiting
 * out their backoff are not what a run spends itself on, and what a run queues is taken in turns
 * across businesses (each business's n-th delivery has priority n) behind fresh jobs.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { sql } from 'drizzle-orm'
import { sweepOutreachDeliveries } from '../../shared/outreach/operations'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { inquiryBody } from '../helpers/outreach'

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

const deps = () => ({ database: ctx.deps.database, queues: ctx.deps.queues, logger: ctx.deps.logger })
const queue = () => ctx.deps.queues.get('outreach')

async function inquiryOf(b: SeededBusiness): Promise<number> {
  const res = await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: b.apiKey, body: inquiryBody({ outreach: false }) })
  expect(res.status, res.text).toBe(200)
  return res.body.inquiry_id
}

/**
 * Pending deliveries without a job. `due` of them are due (never tried, created an hour ago and
 * older; or tried and past their next attempt), oldest first by `offset` minutes; `waiting` of
 * them wait out a backoff an hour from now.
 */
async function pendingDeliveries(b: SeededBusiness, tag: string, counts: { due: number; waiting: number; ageMinutes: number }): Promise<void> {
  const inquiryId = await inquiryOf(b)
  const { db } = ctx.deps.database
  if (counts.due > 0) {
    await db.execute(sql`
      insert into outreach_deliveries (id, business_id, inquiry_id, payload, created_at, attempts, next_attempt_at)
      select ${`dlv_${tag}_due_`}::text || i, ${b.id}::int, ${inquiryId}::int, '{}'::jsonb,
        now() - make_interval(mins => ${counts.ageMinutes}::int + ${counts.due}::int - i),
        case when i % 3 = 0 then 1 else 0 end,
        case when i % 3 = 0 then now() - make_interval(mins => ${counts.ageMinutes}::int + ${counts.due}::int - i) + interval '30 seconds' end
      from generate_series(1, ${counts.due}::int) i`)
  }
  if (counts.waiting > 0) {
    await db.execute(sql`
      insert into outreach_deliveries (id, business_id, inquiry_id, payload, created_at, attempts, next_attempt_at)
      select ${`dlv_${tag}_waiting_`}::text || i, ${b.id}::int, ${inquiryId}::int, '{}'::jsonb, now() - interval '3 hours', 4, now() + interval '1 hour'
      from generate_series(1, ${counts.waiting}::int) i`)
  }
}

/** Outreach jobs by delivery id, with their priority. */
async function queued(): Promise<Map<string, number>> {
  const jobs = await queue().getJobs(['waiting', 'prioritized'], 0, -1)
  return new Map(jobs.filter(Boolean).map((j) => [j.data.deliveryId as string, j.opts.priority ?? 0]))
}

async function reset(businesses: SeededBusiness[]): Promise<void> {
  await ctx.deps.database.db.execute(sql`delete from outreach_deliveries where business_id in ${sql.raw(`(${businesses.map((b) => b.id).join(',')})`)}`)
  await queue().obliterate({ force: true })
}

describe('outreach sweep fairness', () => {
  test("business A's 3,000 older due deliveries do not keep business B's one out of the run", async () => {
    const a = await seedBusiness(ctx)
    const b = await seedBusiness(ctx)
    try {
      await pendingDeliveries(a, `a${a.id}`, { due: 3000, waiting: 0, ageMinutes: 120 })
      await pendingDeliveries(b, `b${b.id}`, { due: 1, waiting: 0, ageMinutes: 5 })
      await sweepOutreachDeliveries(deps())
      const jobs = await queued()
      // B's delivery is queued, first of its business: it waits behind one of A's, not 3,000.
      expect(jobs.get(`dlv_b${b.id}_due_1`)).toBe(1)
      expect(jobs.get(`dlv_a${a.id}_due_1`)).toBe(1)
      expect(jobs.get(`dlv_a${a.id}_due_3000`)).toBe(3000)
    } finally {
      await reset([a, b])
    }
  }, 60_000)

  test('deliveries waiting out their backoff do not use up the run', async () => {
    const a = await seedBusiness(ctx)
    const b = await seedBusiness(ctx)
    try {
      await pendingDeliveries(a, `a${a.id}`, { due: 0, waiting: 1500, ageMinutes: 0 })
      await pendingDeliveries(b, `b${b.id}`, { due: 1, waiting: 0, ageMinutes: 5 })
      await sweepOutreachDeliveries(deps())
      const jobs = await queued()
      expect(jobs.has(`dlv_b${b.id}_due_1`)).toBe(true)
      expect([...jobs.keys()].filter((id) => id.startsWith(`dlv_a${a.id}_`))).toEqual([])
    } finally {
      await reset([a, b])
    }
  }, 60_000)

  test('property: after one run every due delivery of every business is queued, in turns across businesses', async () => {
    const businesses = [await seedBusiness(ctx), await seedBusiness(ctx), await seedBusiness(ctx)]
    let run = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ due: fc.integer({ min: 0, max: 900 }), waiting: fc.integer({ min: 0, max: 400 }), ageMinutes: fc.integer({ min: 2, max: 600 }) }),
          { minLength: 3, maxLength: 3 },
        ),
        async (plan) => {
          run++
          try {
            for (let i = 0; i < businesses.length; i++) await pendingDeliveries(businesses[i], `p${run}x${i}`, plan[i])
            await sweepOutreachDeliveries(deps())
            const jobs = await queued()
            for (let i = 0; i < businesses.length; i++) {
              // The n-th oldest due delivery of each business has priority n, whatever the others hold.
              for (let n = 1; n <= plan[i].due; n++) expect(jobs.get(`dlv_p${run}x${i}_due_${n}`)).toBe(n)
              for (let n = 1; n <= plan[i].waiting; n++) expect(jobs.has(`dlv_p${run}x${i}_waiting_${n}`)).toBe(false)
            }
          } finally {
            await reset(businesses)
          }
        },
      ),
      { numRuns: 6 },
    )
  }, 180_000)
})
