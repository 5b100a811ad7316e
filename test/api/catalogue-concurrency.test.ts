/**
 * The bound on catalogue list statements at once per API process (CATALOGUE_CONCURRENCY,
 * shared/platform/concurrency-limit.ts): lists beyond it wait their turn and are answered
 * exactly as without it; with the database unreachable the bound is lifted, so every waiting
 * list fails at once as unavailable instead of one after another.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createDatabase } from '../../db/client'
import { listCatalogue } from '../../shared/listings/operations'
import { ConcurrencyLimit } from '../../shared/platform/concurrency-limit'
import { loadConfig } from '../../shared/platform/config'
import { isConnectionError, isUnavailableError } from '../../shared/platform/unavailable'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { freePort } from '../helpers/processes'
import { eventually } from '../helpers/eventually'
import { createPublished } from '../helpers/properties'

/** Records the most calls running and waiting at once, seen as each call starts. */
function observe(limit: ConcurrencyLimit): { maxActive: number; maxWaiting: number } {
  const seen = { maxActive: 0, maxWaiting: 0 }
  const run = limit.run.bind(limit)
  limit.run = <T>(work: () => Promise<T>) =>
    run(() => {
      seen.maxActive = Math.max(seen.maxActive, limit.active)
      seen.maxWaiting = Math.max(seen.maxWaiting, limit.waiting)
      return work()
    })
  return seen
}

describe('CATALOGUE_CONCURRENCY', () => {
  let ctx: TestContext
  let biz: SeededBusiness
  beforeAll(async () => {
    ctx = await createTestContext({ CATALOGUE_CONCURRENCY: '1', CATALOGUE_CACHE_MB: '0' })
    biz = await seedBusiness(ctx)
    for (const sale of [100000, 200000, 300000]) await createPublished(ctx, biz.apiKey, { operations: ['venta'], pricing: { sale } })
  })
  afterAll(() => ctx.close())

  test('defaults to 4 statements at once; 0 means no bound', () => {
    expect(loadConfig({ ...process.env, CATALOGUE_CONCURRENCY: undefined }).catalogueConcurrency).toBe(4)
    expect(loadConfig({ ...process.env, CATALOGUE_CONCURRENCY: '0' }).catalogueConcurrency).toBe(0)
    expect(() => loadConfig({ ...process.env, CATALOGUE_CONCURRENCY: '-1' })).toThrow(/CATALOGUE_CONCURRENCY/)
  })

  test('lists beyond the bound wait their turn and each gets its own answer', async () => {
    const limit = ctx.deps.catalogueReads
    expect(limit?.limit).toBe(1)
    const seen = observe(limit as ConcurrencyLimit)
    const queries = Array.from({ length: 12 }, (_, i) => `limit=${1 + (i % 3)}&offset=${i % 2}&operation=venta`)
    const answers = await Promise.all(queries.map((q) => call(ctx.app, 'GET', `/v1/properties?${q}`, { key: biz.apiKey })))
    for (const [i, res] of answers.entries()) {
      expect(res.status, res.text).toBe(200)
      const [limitN, offset] = [1 + (i % 3), i % 2]
      expect(res.body).toMatchObject({ count: 3, count_relation: 'eq', limit: limitN, offset })
      expect(res.body.data).toHaveLength(Math.min(limitN, 3 - offset))
    }
    expect(seen.maxActive).toBe(1)
    expect(seen.maxWaiting).toBeGreaterThan(0)
    expect([limit?.active, limit?.waiting]).toEqual([0, 0])
  })

  test('with PostgreSQL unreachable every waiting list fails as unavailable, the bound lifted by the first failure', async () => {
    const port = await freePort()
    const database = createDatabase(`postgres://postgres@127.0.0.1:${port}/nothing`, { max: 4 })
    const catalogueReads = new ConcurrencyLimit(1, { liftOn: isConnectionError })
    const seen = observe(catalogueReads)
    try {
      const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => listCatalogue({ database, catalogueReads }, 1, { offset: i })))
      for (const outcome of outcomes) {
        expect(outcome.status).toBe('rejected')
        expect(isUnavailableError((outcome as PromiseRejectedResult).reason)).toBe(true)
      }
      expect(seen.maxActive).toBeGreaterThan(1)
    } finally {
      await database.close(1)
    }
  })
})

describe('CATALOGUE_CONCURRENCY with the page cache', () => {
  let ctx: TestContext
  let biz: SeededBusiness
  beforeAll(async () => {
    ctx = await createTestContext({ CATALOGUE_CONCURRENCY: '1' })
    biz = await seedBusiness(ctx)
    for (const sale of [100000, 200000]) await createPublished(ctx, biz.apiKey, { operations: ['venta'], pricing: { sale } })
  })
  afterAll(() => ctx.close())

  test('a stored page is answered while every turn is taken; a page to read waits for one', async () => {
    const limit = ctx.deps.catalogueReads as ConcurrencyLimit
    const list = (query: string) => call(ctx.app, 'GET', `/v1/properties?${query}`, { key: biz.apiKey })
    const stored = await list('limit=1')
    expect(stored.status, stored.text).toBe(200)
    let release: (value?: unknown) => void = () => {}
    const held = limit.run(() => new Promise((resolve) => (release = resolve)))
    try {
      expect(limit.active).toBe(1)
      const again = await list('limit=1')
      expect(again.status, again.text).toBe(200)
      expect(again.body).toEqual(stored.body)
      const other = list('limit=2')
      await eventually(async () => limit.waiting === 1, { what: 'the new page to wait for a turn' })
      release()
      const answered = await other
      expect(answered.status, answered.text).toBe(200)
      expect(answered.body.data).toHaveLength(2)
    } finally {
      release()
      await held
    }
  })
})
