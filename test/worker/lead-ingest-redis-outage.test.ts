/**
 * The ingest never loses an accepted lead (contract §4.1): with Redis stopped or frozen the API
 * stores the batch itself, and once Redis is back the queue resumes without a restart. Uses a
 * PRIVATE redis-server on a free port, never the shared one.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Subprocess } from 'bun'
import IORedis from 'ioredis'
import { createLogger } from '../../shared/platform/logger'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { freePort } from '../helpers/processes'
import { contactsOf, ingestBody, uniquePhone } from '../helpers/leads'

let port: number
let redis: Subprocess | undefined
let ctx: TestContext
let biz: SeededBusiness
let workers: RunningWorkers

async function startRedis(): Promise<void> {
  redis = Bun.spawn(['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdout: 'ignore', stderr: 'ignore' })
  const probe = new IORedis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  probe.on('error', () => {})
  try {
    await eventually(
      async () => {
        if (probe.status !== 'ready') await probe.connect().catch(() => {})
        return (await probe.ping()) === 'PONG'
      },
      { what: `redis-server on ${port}` },
    )
  } finally {
    probe.disconnect()
  }
}

async function stopRedis(): Promise<void> {
  redis?.kill('SIGKILL')
  await redis?.exited
  redis = undefined
}

beforeAll(async () => {
  port = await freePort()
  await startRedis()
  ctx = await createTestContext({ REDIS_URL: `redis://127.0.0.1:${port}`, INGEST_ENQUEUE_TIMEOUT_MS: '300' })
  biz = await seedBusiness(ctx)
  workers = await startWorkers(ctx.config, createLogger('silent'), ['lead-ingest'])
})
afterAll(async () => {
  if (!redis) await startRedis()
  await workers.close(5000)
  await ctx.close()
  await stopRedis()
})

const ingest = (phone: string, name = 'Lucía') => call(ctx.app, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody({ contact: { name, phone } }) })
const lead = async (phone: string) => (await contactsOf(ctx, biz.id)).find((r) => r.phone === phone)

describe('rental ingest when Redis fails', () => {
  test('normally the lead goes through the queue', async () => {
    const phone = uniquePhone()
    const fallbacks = ctx.deps.ingest.stats.fallbacks
    expect((await ingest(phone)).status).toBe(200)
    await eventually(() => lead(phone), { what: 'queued lead' })
    expect(ctx.deps.ingest.stats.fallbacks).toBe(fallbacks)
  })

  test('Redis stopped: still 200, and the lead exists when the answer arrives', async () => {
    await stopRedis()
    const phone = uniquePhone()
    const fallbacks = ctx.deps.ingest.stats.fallbacks
    const res = await ingest(phone)
    expect(res.status, res.text).toBe(200)
    expect(await lead(phone)).toMatchObject({ phone, rating: 3, urgency: 'alta-urgencia' })
    expect(ctx.deps.ingest.stats.fallbacks).toBe(fallbacks + 1)
    // Validation still answers synchronously without Redis.
    expect((await call(ctx.app, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody({ contact: { phone: '1' } }) })).status).toBe(422)
  })

  test('Redis back: the queue resumes without restarting the API or the worker', async () => {
    await startRedis()
    await eventually(async () => (await ctx.deps.redis.ping()) === 'PONG', { what: 'the API reconnected' })
    const phone = uniquePhone()
    const fallbacks = ctx.deps.ingest.stats.fallbacks
    expect((await ingest(phone)).status).toBe(200)
    expect(ctx.deps.ingest.stats.fallbacks).toBe(fallbacks)
    await eventually(() => lead(phone), { what: 'lead persisted by the reconnected worker', timeoutMs: 15_000 })
  })

  test('Redis not answering: after the enqueue timeout the API stores the lead; the late job is a no-op', async () => {
    const phone = uniquePhone()
    const fallbacks = ctx.deps.ingest.stats.fallbacks
    redis!.kill('SIGSTOP')
    let res: Awaited<ReturnType<typeof ingest>>
    try {
      // Answered while Redis is still stopped: by the fallback, once the enqueue timed out.
      res = await ingest(phone, 'Congelada')
    } finally {
      redis!.kill('SIGCONT')
    }
    expect(res.status, res.text).toBe(200)
    expect(ctx.deps.ingest.stats.fallbacks).toBe(fallbacks + 1)
    const stored = await lead(phone)
    expect(stored).toMatchObject({ name: 'Congelada' })
    // Redis then runs the delayed add; the worker's insert of that job changes nothing.
    await eventually(
      async () => {
        const counts = await ctx.deps.queues.get('lead-ingest').getJobCounts('waiting', 'active', 'delayed', 'prioritized')
        return Object.values(counts).every((n) => n === 0)
      },
      { what: 'the late job processed' },
    )
    expect((await contactsOf(ctx, biz.id)).filter((r) => r.phone === phone)).toEqual([stored])
  })
})
