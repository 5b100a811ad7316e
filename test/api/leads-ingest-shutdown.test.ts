import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Queue } from 'bullmq'
import IORedis from 'ioredis'
import { createApp } from '../../api/app'
import { closeApiDeps, createApiDeps } from '../../api/runtime'
import { createLogger } from '../../shared/platform/logger'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { ingestBody, uniquePhone } from '../helpers/leads'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

describe('graceful shutdown of the ingest path', () => {
  test('closing the API flushes gathering leads into Redis before the connection closes', async () => {
    // A batch that would wait a minute: only the shutdown flush can send it.
    const config = { ...ctx.config, ingestBatch: { ...ctx.config.ingestBatch, maxWaitMs: 60_000 } }
    const deps = await createApiDeps(config, createLogger('silent'))
    const app = createApp(deps)
    const phones = [uniquePhone(), uniquePhone()]
    const answers = phones.map((phone) => call(app, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody({ contact: { phone } }) }))
    await eventually(async () => deps.ingest.waiting === 2, { what: 'both leads gathering' })
    const probe = new IORedis(config.redisUrl)
    const queue = new Queue('lead-ingest', { connection: probe, prefix: config.queuePrefix })
    try {
      await closeApiDeps(deps)
      expect((await Promise.all(answers)).map((r) => r.status)).toEqual([200, 200])
      const jobs = await queue.getJobs(['waiting'])
      expect(jobs).toHaveLength(1)
      expect(jobs[0].data.leads.map((l: { phone: string }) => l.phone).sort()).toEqual([...phones].sort())
      expect(deps.ingest.stats.fallbacks).toBe(0)
    } finally {
      await queue.close()
      probe.disconnect()
    }
  })
})
