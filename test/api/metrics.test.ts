import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../api/app'
import { Queues, redisConnection } from '../../shared/platform/queues'
import { call, createTestContext, type TestContext } from '../helpers/context'
import { makeFailedJobs } from '../helpers/failed-jobs'

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

const sample = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('GET /metrics queue figures (contract §6)', () => {
  test('depth per state, outcomes and paused per queue, the same figures as cli queues', async () => {
    await ctx.deps.queues.enqueue('catalogue-reindex', { propertyId: 7 })
    await ctx.deps.queues.enqueue('catalogue-reindex', { propertyId: 8 }, { delay: 60_000 })
    await makeFailedJobs(ctx, 'upload-complete', 3)
    await ctx.deps.queues.get('outreach').pause()
    const res = await call(ctx.app, 'GET', '/metrics')
    expect(res.status).toBe(200)
    const m = (s: string) => sample(res.text, s)
    expect(m('queue_jobs{queue="catalogue-reindex",state="waiting"}')).toBe(1)
    expect(m('queue_jobs{queue="catalogue-reindex",state="delayed"}')).toBe(1)
    expect(m('queue_jobs{queue="catalogue-reindex",state="active"}')).toBe(0)
    expect(m('queue_jobs{queue="upload-complete",state="failed"}')).toBe(3)
    expect(m('queue_jobs{queue="upload-complete",state="completed"}')).toBe(0)
    expect(m('queue_jobs_processed_total{queue="upload-complete",outcome="failed"}')).toBe(3)
    expect(m('queue_jobs_processed_total{queue="upload-complete",outcome="completed"}')).toBe(0)
    expect(m('queue_paused{queue="outreach"}')).toBe(1)
    expect(m('queue_paused{queue="lead-ingest"}')).toBe(0)
    expect(res.text).toContain('# TYPE queue_jobs gauge')
    expect(res.text).toContain('# TYPE queue_jobs_processed_total counter')
  })

  test('Redis unreachable: request metrics still served, queue figures marked unavailable', async () => {
    const redis = redisConnection('redis://127.0.0.1:1', 'producer', { retryStrategy: () => null })
    redis.on('error', () => {})
    const app = createApp({ ...ctx.deps, redis, queues: new Queues(redis, ctx.config.queuePrefix) })
    const res = await call(app, 'GET', '/metrics')
    expect(res.status).toBe(200)
    expect(res.text).toContain('http_requests_total')
    expect(res.text).toContain('# queue metrics unavailable')
    redis.disconnect()
  })
})
