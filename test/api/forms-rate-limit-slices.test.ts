/**
 * Large quotas are taken from Redis in slices (api/rate-limits.ts `take`): two limiters on their
 * own connections (two replicas) share one count, never let more than the quota through, and
 * refuse at most a slice per replica early; a small quota stays exact. Real Redis, no HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import IORedis from 'ioredis'
import { LEASE_SHARE, RateLimits } from '../../api/rate-limits'
import { parseRate } from '../../shared/access/publishable'
import { getConfig } from '../../shared/platform/config'

const prefix = `test-${randomBytes(4).toString('hex')}`
const shared = new IORedis(getConfig().redisUrl, { maxRetriesPerRequest: 1 })
const replicas = [RateLimits.connect(shared, prefix), RateLimits.connect(shared, prefix)]

afterAll(async () => {
  for (const r of replicas) r.close()
  const keys = await shared.keys(`${prefix}:*`)
  if (keys.length) await shared.del(...keys)
  shared.disconnect()
})

beforeAll(() => Promise.all(replicas.map((r) => r.ready())))

async function spend(keyId: string, quota: string, attempts: number): Promise<number> {
  const access = { origins: ['https://a.example'], ratePerIp: parseRate('999999999/min'), rate: parseRate(quota) }
  let accepted = 0
  for (let i = 0; i < attempts; i++) if (!(await replicas[i % 2].consume(keyId, access, `198.51.100.${i % 7}`)).exceeded) accepted++
  return accepted
}

describe('slices of a large quota', () => {
  test('two replicas together never pass the quota and refuse at most a slice each early', async () => {
    const accepted = await spend(`slices-${randomBytes(4).toString('hex')}`, '1000/min', 1200)
    expect(accepted).toBeLessThanOrEqual(1000)
    expect(accepted).toBeGreaterThanOrEqual(1000 - 2 * (1000 / LEASE_SHARE))
  }, 30_000)

  test('a small quota is exact', async () => {
    expect(await spend(`exact-${randomBytes(4).toString('hex')}`, '150/min', 200)).toBe(150)
  }, 30_000)
})
