/**
 * Operations: request log levels by status with the request id, route labels kept for
 * requests refused before routing (401), and the process figures on /metrics.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../api/app'
import { Metrics } from '../../api/metrics'
import { Queues, redisConnection } from '../../shared/platform/queues'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

/** The request log line of the request with this id (written after the response is sent). */
const requestLine = (id: string) =>
  eventually(async () => ctx.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'request' && l.request_id === id), {
    what: `the request log line of ${id}`,
  })

const sample = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('request log levels', () => {
  test('2xx and 4xx at info, 5xx at error, each with the request id it answered with', async () => {
    const ok = await call(ctx.app, 'GET', '/v1/me', { key: biz.apiKey })
    const notFound = await call(ctx.app, 'GET', '/v1/properties/2000000000', { key: biz.apiKey })
    const unauthorized = await call(ctx.app, 'GET', '/v1/properties')
    expect([ok.status, notFound.status, unauthorized.status]).toEqual([200, 404, 401])
    for (const res of [ok, notFound, unauthorized]) expect((await requestLine(res.headers.get('x-request-id')!)).level).toBe('info')

    // Redis unreachable: /readyz answers 503.
    const redis = redisConnection('redis://127.0.0.1:1', 'producer', { retryStrategy: () => null })
    redis.on('error', () => {})
    const app = createApp({ ...ctx.deps, redis, queues: new Queues(redis, ctx.config.queuePrefix) })
    const unavailable = await call(app, 'GET', '/readyz', { headers: { 'x-request-id': 'readyz-while-redis-is-down' } })
    redis.disconnect()
    expect(unavailable.status).toBe(503)
    expect(await requestLine('readyz-while-redis-is-down')).toMatchObject({ level: 'error', status: 503, route: '/readyz' })
  })
})

describe('route labels', () => {
  test('a 401 keeps its route in the log line and in http_requests_total; a path no route takes stays unmatched', async () => {
    const app = createApp({ ...ctx.deps, metrics: new Metrics() })
    const list = await call(app, 'GET', '/v1/properties', { headers: { 'x-request-id': 'list-401' } })
    const one = await call(app, 'PATCH', '/v1/properties/12', { headers: { 'x-request-id': 'one-401', 'x-api-key': 'not-a-key' }, body: {} })
    const inquiry = await call(app, 'POST', '/v1/leads/inquiries', { headers: { 'x-request-id': 'inquiry-401' }, body: {} })
    const nowhere = await call(app, 'GET', '/v1/no-such-thing', { headers: { 'x-request-id': 'nowhere-401' } })
    expect([list.status, one.status, inquiry.status, nowhere.status]).toEqual([401, 401, 401, 401])
    expect((await requestLine('list-401')).route).toBe('/v1/properties')
    expect((await requestLine('one-401')).route).toBe('/v1/properties/:property_id')
    expect((await requestLine('inquiry-401')).route).toBe('/v1/leads/inquiries')
    expect((await requestLine('nowhere-401')).route).toBe('unmatched')
    const metrics = (await call(app, 'GET', '/metrics')).text
    expect(sample(metrics, 'http_requests_total{method="GET",route="/v1/properties",status="401"}')).toBe(1)
    expect(sample(metrics, 'http_requests_total{method="PATCH",route="/v1/properties/:property_id",status="401"}')).toBe(1)
    expect(sample(metrics, 'http_requests_total{method="POST",route="/v1/leads/inquiries",status="401"}')).toBe(1)
    expect(sample(metrics, 'http_requests_total{method="GET",route="unmatched",status="401"}')).toBe(1)
  })
})

describe('process metrics on /metrics', () => {
  test('CPU, memory, start time, open descriptors and event loop lag, each with HELP and TYPE', async () => {
    const res = await call(ctx.app, 'GET', '/metrics')
    expect(res.status).toBe(200)
    const figures = {
      process_cpu_seconds_total: 'counter',
      process_cpu_user_seconds_total: 'counter',
      process_cpu_system_seconds_total: 'counter',
      process_resident_memory_bytes: 'gauge',
      process_start_time_seconds: 'gauge',
      process_open_fds: 'gauge',
      process_max_fds: 'gauge',
      event_loop_lag_seconds: 'gauge',
    }
    for (const [name, type] of Object.entries(figures)) {
      expect(res.text).toContain(`# TYPE ${name} ${type}\n`)
      expect(res.text).toContain(`# HELP ${name} `)
      const value = sample(res.text, name)
      expect(Number.isFinite(value), name).toBe(true)
      expect(value!, name).toBeGreaterThanOrEqual(0)
    }
    expect(sample(res.text, 'process_cpu_seconds_total')!).toBeGreaterThan(0)
    expect(sample(res.text, 'process_resident_memory_bytes')!).toBeGreaterThan(1024 * 1024)
    expect(sample(res.text, 'process_open_fds')!).toBeGreaterThan(2)
    const startedAt = sample(res.text, 'process_start_time_seconds')!
    expect(startedAt).toBeLessThanOrEqual(Date.now() / 1000)
    expect(startedAt).toBeGreaterThan(Date.now() / 1000 - 86_400)
  })
})
