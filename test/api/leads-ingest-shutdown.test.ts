/**
 * Closing the API flushes the leads still gathering behind a batch on its way to Redis. Uses a
 * PRIVATE redis-server on a free port (it is paused), never the shared one.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Subprocess } from 'bun'
import { Queue } from 'bullmq'
import IORedis from 'ioredis'
import { createApp } from '../../api/app'
import { closeApiDeps, createApiDeps } from '../../api/runtime'
import { createLogger } from '../../shared/platform/logger'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { freePort } from '../helpers/processes'
import { ingestBody, uniquePhone } from '../helpers/leads'

let port: number
let redis: Subprocess
let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  port = await freePort()
  redis = Bun.spawn(['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdout: 'ignore', stderr: 'ignore' })
  const probe = new IORedis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  probe.on('error', () => {})
  await eventually(
    async () => {
      if (probe.status !== 'ready') await probe.connect().catch(() => {})
      return (await probe.ping()) === 'PONG'
    },
    { what: `redis-server on ${port}` },
  )
  probe.disconnect()
  ctx = await createTestContext({ REDIS_URL: `redis://127.0.0.1:${port}` })
  biz = await seedBusiness(ctx)
})
afterAll(async () => {
  await ctx.close()
  redis.kill('SIGKILL')
  await redis.exited
})

describe('graceful shutdown of the ingest path', () => {
  test('closing the API flushes gathering leads into Redis before the connection closes', async () => {
    // Gathered leads would wait a minute behind the batch on its way: only the shutdown flush sends them.
    const config = { ...ctx.config, ingestBatch: { ...ctx.config.ingestBatch, maxWaitMs: 60_000, enqueueTimeoutMs: 10_000 } }
    const deps = await createApiDeps(config, createLogger('silent'))
    const app = createApp(deps)
    const admin = new IORedis(config.redisUrl)
    const queue = new Queue('lead-ingest', { connection: admin, prefix: config.queuePrefix })
    try {
      await queue.waitUntilReady()
      // Writes (BullMQ's add script) wait for 1.5 s: the first batch stays on its way.
      await admin.call('CLIENT', 'PAUSE', '1500', 'WRITE')
      const [first, ...gathering] = [uniquePhone(), uniquePhone(), uniquePhone()]
      const send = (phone: string) => call(app, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody({ contact: { phone } }) })
      const answers = [send(first)]
      await eventually(async () => deps.ingest.stats.batches === 1, { what: 'the first batch on its way' })
      answers.push(...gathering.map(send))
      await eventually(async () => deps.ingest.waiting === 2, { what: 'two leads gathering behind it' })
      await closeApiDeps(deps)
      expect((await Promise.all(answers)).map((r) => r.status)).toEqual([200, 200, 200])
      const jobs = await queue.getJobs(['waiting'])
      const batches = jobs.map((j) => j.data.leads.map((l: { phone: string }) => l.phone).sort()).sort((a, b) => a.length - b.length)
      expect(batches).toEqual([[first], [...gathering].sort()])
      expect(deps.ingest.stats.fallbacks).toBe(0)
    } finally {
      await queue.close()
      admin.disconnect()
    }
  })
})
