import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { call, createTestContext, eventually, type TestContext } from '../helpers/context'
import { run } from '../helpers/processes'

// Each test spawns the CLI as a real process, some several times: seconds each on a loaded machine.
setDefaultTimeout(60_000)

const cli = (...args: string[]) => run(['run', 'cli/index.ts', ...args])
let ctx: TestContext | undefined
afterAll(() => ctx?.close())

describe('operator CLI (contract §1)', () => {
  test('business create, key create/list/revoke with --json print exactly one JSON object', async () => {
    ctx = await createTestContext()
    const b = await cli('business', 'create', '--name', 'Inmobiliaria Sol', '--json')
    expect(b.code, b.stderr).toBe(0)
    const business = JSON.parse(b.stdout)
    expect(b.stdout.trim().split('\n')).toHaveLength(1)
    expect(business).toEqual({ id: expect.any(Number), name: 'Inmobiliaria Sol' })
    ctx.businessIds.push(business.id)

    const k = await cli('key', 'create', '--business', String(business.id), '--scopes', 'leads:ingest,properties:read', '--name', 'web', '--json')
    expect(k.code, k.stderr).toBe(0)
    expect(k.stdout.trim().split('\n')).toHaveLength(1)
    const key = JSON.parse(k.stdout)
    expect(key).toEqual({
      business_id: business.id,
      key_id: expect.any(String),
      api_key: expect.stringMatching(/^AC_LIVE_[A-Za-z0-9]+\.[A-Za-z0-9_-]{32,}$/),
      kind: 'secret',
      scopes: ['leads:ingest', 'properties:read'],
      expires_at: null,
    })
    expect(key.api_key).toStartWith(`AC_LIVE_${key.key_id}.`)

    const me = await call(ctx.app, 'GET', '/v1/me', { key: key.api_key })
    expect(me.status, me.text).toBe(200)
    expect(me.body.authenticated_as).toBe('Inmobiliaria Sol')

    const list = await cli('key', 'list', '--business', String(business.id), '--json')
    expect(list.code, list.stderr).toBe(0)
    const listed = JSON.parse(list.stdout)
    expect(listed.keys).toHaveLength(1)
    expect(listed.keys[0]).toMatchObject({ key_id: key.key_id, name: 'web', scopes: ['leads:ingest', 'properties:read'], revoked_at: null })
    expect(list.stdout).not.toContain(key.api_key.split('.')[1])

    const revoke = await cli('key', 'revoke', key.key_id, '--json')
    expect(revoke.code, revoke.stderr).toBe(0)
    expect(JSON.parse(revoke.stdout)).toEqual({ key_id: key.key_id, revoked: true })
    const app = ctx.app
    await eventually(async () => (await call(app, 'GET', '/v1/me', { key: key.api_key })).status === 401, { what: 'the revoked key to be refused' })
  })

  test('the secret is stored only as its SHA-256', async () => {
    ctx ??= await createTestContext()
    const b = JSON.parse((await cli('business', 'create', '--name', 'Hash Check', '--json')).stdout)
    ctx.businessIds.push(b.id)
    const key = JSON.parse((await cli('key', 'create', '--business', String(b.id), '--scopes', 'leads:read', '--json')).stdout)
    const secret = key.api_key.split('.')[1]
    const rows = await ctx.deps.database.sql`select * from api_keys where key_id = ${key.key_id}`
    expect(JSON.stringify(rows)).not.toContain(secret)
    expect(rows[0].secret_hash).toBe(new Bun.CryptoHasher('sha256').update(secret).digest('hex'))
  })

  test('--expires-at is honoured: an expired key is refused', async () => {
    ctx ??= await createTestContext()
    const b = JSON.parse((await cli('business', 'create', '--name', 'Expiry', '--json')).stdout)
    ctx.businessIds.push(b.id)
    const past = await cli('key', 'create', '--business', String(b.id), '--scopes', 'leads:read', '--expires-at', '2020-01-01T00:00:00Z', '--json')
    expect(past.code, past.stderr).toBe(0)
    const key = JSON.parse(past.stdout)
    expect(key.expires_at).toBe('2020-01-01T00:00:00.000Z')
    expect((await call(ctx.app, 'GET', '/v1/me', { key: key.api_key })).status).toBe(401)
  })

  test('a malformed command line exits 2, a refusal at run time exits 1; each is one line on stderr', async () => {
    const bad = await cli('key', 'create', '--business', '1', '--scopes', 'leads:read,leads:delete', '--json')
    expect(bad.code).toBe(2)
    expect(bad.stdout).toBe('')
    expect(bad.stderr).toContain('unknown scope: leads:delete')
    const missing = await cli('key', 'create', '--business', '99999999', '--scopes', 'leads:read', '--json')
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('business 99999999 does not exist')
    const date = await cli('key', 'create', '--business', '1', '--scopes', 'leads:read', '--expires-at', 'tomorrow')
    expect(date.code).toBe(2)
    expect(date.stderr).toContain('--expires-at')
    const revoke = await cli('key', 'revoke', 'nosuchkey')
    expect(revoke.code).toBe(1)
    expect(revoke.stderr).toContain('does not exist')
    for (const r of [bad, missing, date, revoke]) expect(r.stderr.trim().split('\n')).toHaveLength(1)
  })
})
