/**
 * A publishable key's limits hold across API replicas (contract §16.4): two API processes on
 * their own ports, sharing PostgreSQL and Redis as replicas do; the second process sees the
 * count the first one made, and refuses past the limit. The client address is the connection's
 * peer (127.0.0.1 here): X-Forwarded-For is ignored without TRUST_PROXY_HOPS.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { ManagedProcess, until } from '../faults/cluster'
import { createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { LANDING, ingestBody, publishableKey } from '../helpers/forms'
import { freePort } from '../helpers/processes'

const prefix = `test-${randomBytes(4).toString('hex')}`
let ctx: TestContext
let biz: SeededBusiness
const apis: (ManagedProcess & { port: number })[] = []
const dir = mkdtempSync(join(tmpdir(), 'forms-two-apis-'))

beforeAll(async () => {
  ctx = await createTestContext({ QUEUE_PREFIX: prefix })
  biz = await seedBusiness(ctx)
  for (const name of ['api-a', 'api-b']) {
    const port = await freePort()
    const env = {
      QUEUE_PREFIX: prefix,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: join(dir, name),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'test',
    }
    apis.push(Object.assign(new ManagedProcess(name, ['bun', 'run', 'api/index.ts'], env, dir), { port }))
  }
  for (const api of apis) api.start()
  for (const api of apis)
    await until(
      `${api.name} /readyz`,
      async () =>
        (await fetch(`http://127.0.0.1:${api.port}/readyz`).then(
          (r) => r.status,
          () => 0,
        )) === 200,
      20_000,
    )
}, 60_000)

afterAll(async () => {
  await Promise.all(apis.map((a) => a.stop()))
  await ctx.close()
  rmSync(dir, { recursive: true, force: true })
}, 30_000)

const send = (api: { port: number }, key: string, headers: Record<string, string> = {}) =>
  fetch(`http://127.0.0.1:${api.port}/v1/leads/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, origin: LANDING, ...headers },
    body: JSON.stringify(ingestBody()),
  })

describe('limits across two API processes', () => {
  test("the second process sees the first one's count, and refuses past the limit", async () => {
    const key = await publishableKey(ctx, biz.id, { ratePerIp: '4/min', rate: '100/min' })
    const [a, b] = apis
    const first = [await send(a, key.apiKey), await send(a, key.apiKey), await send(a, key.apiKey)]
    expect(first.map((r) => r.status)).toEqual([200, 200, 200])
    expect(first[2].headers.get('ratelimit')).toStartWith('"per-ip";r=1;')
    const fromB = await send(b, key.apiKey)
    expect(fromB.status).toBe(200)
    expect(fromB.headers.get('ratelimit')).toStartWith('"per-ip";r=0;')
    expect(fromB.headers.get('ratelimit')).toContain('"per-key";r=96;')
    const refusedByB = await send(b, key.apiKey)
    expect(refusedByB.status).toBe(429)
    expect(Number(refusedByB.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    const refusedByA = await send(a, key.apiKey)
    expect(refusedByA.status).toBe(429)
  }, 30_000)

  test('without TRUST_PROXY_HOPS the peer counts: X-Forwarded-For changes nothing', async () => {
    const key = await publishableKey(ctx, biz.id, { ratePerIp: '2/min', rate: '100/min' })
    const statuses = []
    for (const [i, address] of ['198.51.100.1', '198.51.100.2', '198.51.100.3'].entries())
      statuses.push((await send(apis[i % 2], key.apiKey, { 'x-forwarded-for': address })).status)
    expect(statuses).toEqual([200, 200, 429])
  }, 30_000)
})
