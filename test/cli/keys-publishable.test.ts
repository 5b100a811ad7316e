/**
 * Publishable keys through the operator CLI (contract §16.1), run as real processes against the
 * test database: create prints the whole key once with its kind, origins and rates; list shows
 * them; `key origins` replaces the origins and every API replica uses them within 1 s.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { call, createTestContext, eventually, type TestContext } from '../helpers/context'
import { run } from '../helpers/processes'

setDefaultTimeout(60_000)

const cli = (...args: string[]) => run(['run', 'cli/index.ts', ...args])
let ctx: TestContext
let businessId: number

beforeAll(async () => {
  ctx = await createTestContext()
  const b = await cli('business', 'create', '--name', 'Landing CLI', '--json')
  businessId = JSON.parse(b.stdout).id
  ctx.businessIds.push(businessId)
})
afterAll(() => ctx.close())

const ingest = (phone: string) => ({
  id: 's',
  createdAt: '2026-11-01T10:00:00Z',
  source: 'landing',
  sourcePage: 'https://landing.example.com/',
  contact: { name: 'Ana', phone },
  search: {},
})

describe('key create --publishable, key list, key origins', () => {
  test('create prints one JSON object: AC_PUB_ key, kind, scope leads:ingest, canonical origins, default rates', async () => {
    const r = await cli(
      'key',
      'create',
      '--business',
      String(businessId),
      '--publishable',
      '--origins',
      'https://Landing.Example.com:443,http://localhost:8080',
      '--name',
      'spring',
      '--json',
    )
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.trim().split('\n')).toHaveLength(1)
    const key = JSON.parse(r.stdout)
    expect(key).toEqual({
      business_id: businessId,
      key_id: expect.any(String),
      api_key: expect.stringMatching(/^AC_PUB_[A-Za-z0-9]{16}\.[A-Za-z0-9_-]{32}$/),
      kind: 'publishable',
      scopes: ['leads:ingest'],
      origins: ['https://landing.example.com', 'http://localhost:8080'],
      rate_per_ip: '10/min',
      rate: '600/min',
      expires_at: null,
    })
    expect(key.api_key).toStartWith(`AC_PUB_${key.key_id}.`)

    const list = await cli('key', 'list', '--business', String(businessId), '--json')
    expect(list.code, list.stderr).toBe(0)
    const listed = JSON.parse(list.stdout).keys.find((k: { key_id: string }) => k.key_id === key.key_id)
    expect(listed).toMatchObject({
      kind: 'publishable',
      name: 'spring',
      scopes: ['leads:ingest'],
      origins: ['https://landing.example.com', 'http://localhost:8080'],
      rate_per_ip: '10/min',
      rate: '600/min',
    })
    expect(list.stdout).not.toContain(key.api_key.split('.')[1])
  })

  test('--rate-per-ip and --rate are stored in canonical form; a secret key lists kind secret with no origins or rates', async () => {
    const pub = JSON.parse(
      (
        await cli(
          'key',
          'create',
          '--business',
          String(businessId),
          '--publishable',
          '--origins',
          'https://a.example',
          '--rate-per-ip',
          '5/s',
          '--rate',
          '100/h',
          '--json',
        )
      ).stdout,
    )
    expect(pub).toMatchObject({ rate_per_ip: '5/s', rate: '100/h' })
    const secret = JSON.parse((await cli('key', 'create', '--business', String(businessId), '--scopes', 'leads:read', '--json')).stdout)
    expect(secret.kind).toBe('secret')
    const listed = JSON.parse((await cli('key', 'list', '--business', String(businessId), '--json')).stdout).keys.find(
      (k: { key_id: string }) => k.key_id === secret.key_id,
    )
    expect(listed).toMatchObject({ kind: 'secret', origins: null, rate_per_ip: null, rate: null })
    const text = await cli('key', 'list', '--business', String(businessId))
    expect(text.stdout).toContain(`${pub.key_id}  publishable`)
    expect(text.stdout).toContain('5/s per address, 100/h in total')
  })

  test('key origins --set replaces the origins; the API takes the new one and refuses the old within 1 s', async () => {
    const key = JSON.parse((await cli('key', 'create', '--business', String(businessId), '--publishable', '--origins', 'https://old.example', '--json')).stdout)
    const from = (origin: string, phone: string) => call(ctx.app, 'POST', '/v1/leads/ingest', { key: key.api_key, body: ingest(phone), headers: { origin } })
    expect((await from('https://old.example', '+34600700001')).status).toBe(200)
    expect((await from('https://new.example', '+34600700002')).status).toBe(403)

    const set = await cli('key', 'origins', key.key_id, '--set', 'https://new.example', '--json')
    expect(set.code, set.stderr).toBe(0)
    expect(JSON.parse(set.stdout)).toEqual({ key_id: key.key_id, origins: ['https://new.example'] })
    const changedAt = performance.now()
    await eventually(async () => (await from('https://new.example', '+34600700003')).status === 200, {
      timeoutMs: 3000,
      intervalMs: 20,
      what: 'the new origin to be taken',
    })
    const old = await from('https://old.example', '+34600700004')
    expect(old.status).toBe(403)
    expect(performance.now() - changedAt).toBeLessThan(1000)
    const me = await call(ctx.app, 'GET', '/v1/me', { key: key.api_key })
    expect(me.body.data.api_key).toMatchObject({ kind: 'publishable', origins: ['https://new.example'] })
  })

  test('key origins refuses a secret key and an unknown key at run time (exit 1)', async () => {
    const secret = JSON.parse((await cli('key', 'create', '--business', String(businessId), '--scopes', 'leads:ingest', '--json')).stdout)
    const r = await cli('key', 'origins', secret.key_id, '--set', 'https://a.example')
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('is a secret key')
    const missing = await cli('key', 'origins', 'nosuchkey000000', '--set', 'https://a.example')
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('does not exist')
  })
})
