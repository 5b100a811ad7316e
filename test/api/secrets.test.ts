/**
 * Secrets at rest and in logs (contract §1, §4.2; conventions §5): API key secrets are stored
 * only as a SHA-256, outreach signing secrets only sealed with APP_SECRET, and neither appears
 * in any table, any log line of the API (in process and as a real process), or any CLI output
 * other than the one that shows it once.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { call, createTestContext, eventually, seedBusiness, type TestContext } from '../helpers/context'
import { freePort, ROOT } from '../helpers/processes'

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

const cli = async (...args: string[]) => {
  const proc = Bun.spawn(['bun', 'run', 'cli/index.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, QUEUE_PREFIX: ctx.config.queuePrefix },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

/** The forms a leaked secret could take in storage or a log: as is, hex, base64, and of its decoded bytes. */
function encodingsOf(secret: string): string[] {
  const raw = Buffer.from(secret)
  const forms = [secret, raw.toString('hex'), raw.toString('base64'), raw.toString('base64url')]
  if (/^[A-Za-z0-9_-]+$/.test(secret)) {
    const decoded = Buffer.from(secret, 'base64url')
    if (decoded.length >= 12) forms.push(decoded.toString('hex'), decoded.toString('base64'))
  }
  return [...new Set(forms)]
}

/** Tables (any column, any row, as text) holding any of the needles. */
async function tablesContaining(needles: string[]): Promise<string[]> {
  const db = ctx.deps.database.db
  const tables = await db.execute<{ table_name: string }>(
    sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
  )
  const hits: string[] = []
  for (const { table_name } of tables) {
    for (const needle of needles) {
      const [row] = await db.execute<{ n: number }>(
        sql`select count(*)::int as n from ${sql.identifier(table_name)} t where strpos(lower(t::text), lower(${needle})) > 0`,
      )
      if (row.n > 0) hits.push(`${table_name} holds ${needle.slice(0, 6)}…`)
    }
  }
  return hits
}

const leaks = (text: string, needles: string[]) => needles.filter((n) => text.toLowerCase().includes(n.toLowerCase()))

describe('API key secrets', () => {
  test('stored only as their SHA-256: no table holds the secret in any encoding', async () => {
    const business = await cli('business', 'create', '--name', 'Secretos SL', '--json')
    expect(business.code, business.stderr).toBe(0)
    const businessId = JSON.parse(business.stdout).id
    ctx.businessIds.push(businessId)
    const created = await cli('key', 'create', '--business', String(businessId), '--scopes', 'properties:read,leads:read', '--json')
    expect(created.code, created.stderr).toBe(0)
    const { api_key: apiKey, key_id: keyId } = JSON.parse(created.stdout)
    const secret = apiKey.split('.')[1]
    expect(secret.length).toBeGreaterThanOrEqual(22) // ≥ 128 bits in base64url

    const [row] = await ctx.deps.database.db.execute<{ secret_hash: string }>(sql`select secret_hash from api_keys where key_id = ${keyId}`)
    expect(row.secret_hash).toBe(createHash('sha256').update(secret).digest('hex'))
    expect(await tablesContaining(encodingsOf(secret))).toEqual([])
    expect(await tablesContaining([apiKey])).toEqual([])

    const list = await cli('key', 'list', '--business', String(businessId), '--json')
    const listText = await cli('key', 'list', '--business', String(businessId))
    expect(list.code, list.stderr).toBe(0)
    expect(list.stdout).toContain(keyId)
    expect(leaks(list.stdout + list.stderr + listText.stdout + listText.stderr + created.stderr, encodingsOf(secret))).toEqual([])
  })

  test('never in a log line, whatever the request does with the key', async () => {
    const biz = await seedBusiness(ctx)
    const secret = biz.apiKey.split('.')[1]
    const before = ctx.logs.length
    const wrong = `${biz.apiKey.split('.')[0]}.${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`
    await call(ctx.app, 'GET', '/v1/me', { key: biz.apiKey })
    await call(ctx.app, 'GET', '/v1/me', { headers: { authorization: `ApiKey ${biz.apiKey}` } })
    await call(ctx.app, 'GET', '/v1/properties?limit=abc', { key: biz.apiKey })
    await call(ctx.app, 'POST', '/v1/properties', { key: biz.apiKey, body: '{"broken' })
    await call(ctx.app, 'GET', '/v1/me', { key: wrong })
    await call(ctx.app, 'GET', '/v1/me', { key: `${biz.apiKey}x` })
    await call(ctx.app, 'GET', `/v1/nope?key=${biz.apiKey}`, { key: biz.apiKey })
    // The request line is written after the response; the public key id is how logs name a key.
    await eventually(async () => ctx.logs.slice(before).filter((l) => l.includes('"msg":"request"')).length >= 7, { what: 'request log lines' })
    expect(ctx.logs.slice(before).join('')).toContain(biz.keyId)
    const logs = ctx.logs.join('')
    expect(leaks(logs, [...encodingsOf(secret), ...encodingsOf(wrong.split('.')[1])])).toEqual([])
  })

  test('never in the output of a real API process at debug level, errors included', async () => {
    const biz = await seedBusiness(ctx)
    const secret = biz.apiKey.split('.')[1]
    const port = await freePort()
    const proc = Bun.spawn(['bun', 'run', 'api/index.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), LOG_LEVEL: 'debug', QUEUE_PREFIX: ctx.config.queuePrefix },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    try {
      const base = `http://127.0.0.1:${port}`
      await eventually(() => fetch(`${base}/readyz`).then((r) => r.status === 200), { timeoutMs: 15_000, what: 'API ready' })
      const headers = { 'x-api-key': biz.apiKey }
      await fetch(`${base}/v1/me`, { headers })
      await fetch(`${base}/v1/properties?offset=-1`, { headers })
      await fetch(`${base}/v1/properties`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"title":' })
      await fetch(`${base}/v1/properties`, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: biz.apiKey })
      await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${biz.apiKey}` } })
      await fetch(`${base}/v1/me`, { headers: { 'x-api-key': `${biz.apiKey}.${biz.apiKey}` } })
    } finally {
      proc.kill('SIGTERM')
    }
    await proc.exited
    const out = (await new Response(proc.stdout).text()) + (await new Response(proc.stderr).text())
    expect(out).toContain('"msg":"request"')
    expect(leaks(out, encodingsOf(secret))).toEqual([])
  })
})

describe('outreach signing secrets', () => {
  test('stored only sealed: no table holds the secret, and only `outreach set` ever prints it', async () => {
    const biz = await seedBusiness(ctx)
    const set = await cli('outreach', 'set', '--business', String(biz.id), '--url', 'http://127.0.0.1:9/hook', '--json')
    expect(set.code, set.stderr).toBe(0)
    const { secret } = JSON.parse(set.stdout)
    expect(typeof secret).toBe('string')
    expect(secret.length).toBeGreaterThanOrEqual(16)
    expect(await tablesContaining(encodingsOf(secret))).toEqual([])
    const others = [
      await cli('outreach', 'show', '--business', String(biz.id), '--json'),
      await cli('outreach', 'show', '--business', String(biz.id)),
      await cli('outreach', 'deliveries', '--business', String(biz.id), '--json'),
    ]
    for (const r of others) expect(leaks(r.stdout + r.stderr, encodingsOf(secret))).toEqual([])
    expect(leaks(set.stderr + ctx.logs.join(''), encodingsOf(secret))).toEqual([])
    // Rotation: the new secret is also sealed, the old one is gone.
    const again = await cli('outreach', 'set', '--business', String(biz.id), '--url', 'http://127.0.0.1:9/hook', '--json')
    const rotated = JSON.parse(again.stdout).secret
    expect(rotated).not.toBe(secret)
    expect(await tablesContaining([...encodingsOf(secret), ...encodingsOf(rotated)])).toEqual([])
  })
})
