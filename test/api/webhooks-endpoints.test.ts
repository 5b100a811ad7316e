/**
 * Webhook endpoint routes (contract §10.2, §15): CRUD with the secret shown once and stored
 * sealed, the request-forgery guard on `url` at create and PATCH, `enabled_events` limited to
 * what the key can read, the `webhooks:write` scope, and 404 across businesses.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { parseScopes } from '../../shared/access/scopes'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext({ WEBHOOK_ALLOW_HOSTS: '127.0.0.1' })
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const create = (key: string, body: unknown) => call(ctx.app, 'POST', '/v1/webhook_endpoints', { key, body })
const valid = (overrides: Record<string, unknown> = {}) => ({ url: 'http://127.0.0.1:9/hook', enabled_events: ['lead.created', 'property.*'], ...overrides })

describe('CRUD', () => {
  test('create shows the secret once; list and get never; the secret is stored sealed', async () => {
    const res = await create(biz.apiKey, valid({ description: 'CRM' }))
    expect(res.status, res.text).toBe(201)
    const { secret, ...endpoint } = res.body.data
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(endpoint).toMatchObject({
      url: 'http://127.0.0.1:9/hook',
      enabled_events: ['lead.created', 'property.*'],
      status: 'enabled',
      disabled_reason: null,
      description: 'CRM',
    })
    const got = await call(ctx.app, 'GET', `/v1/webhook_endpoints/${endpoint.id}`, { key: biz.apiKey })
    expect(got.body).toMatchObject({ status: 'ok', data: endpoint, authenticated_as: biz.name })
    const listed = await call(ctx.app, 'GET', '/v1/webhook_endpoints', { key: biz.apiKey })
    expect(listed.body.data).toContainEqual(endpoint)
    for (const text of [got.text, listed.text]) expect(text).not.toContain(secret.slice(6, 30))
    const stored = await ctx.deps.database.db.execute<{ secret_sealed: string }>(sql`select secret_sealed from webhook_endpoints where id = ${endpoint.id}`)
    expect(stored[0].secret_sealed).toMatch(/^v1\./)
    expect(stored[0].secret_sealed).not.toContain(secret.slice(6, 30))
    expect(ctx.logs.join('\n')).not.toContain(secret.slice(6))
  })

  test('PATCH changes what is sent; disabling shows a reason and enabling clears it; DELETE removes it', async () => {
    const id = (await create(biz.apiKey, valid())).body.data.id
    const patched = await call(ctx.app, 'PATCH', `/v1/webhook_endpoints/${id}`, { key: biz.apiKey, body: { enabled_events: ['*'], description: null } })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.data).toMatchObject({ enabled_events: ['*'], description: null, url: 'http://127.0.0.1:9/hook' })
    const disabled = await call(ctx.app, 'PATCH', `/v1/webhook_endpoints/${id}`, { key: biz.apiKey, body: { status: 'disabled' } })
    expect(disabled.body.data).toMatchObject({ status: 'disabled', disabled_reason: 'disabled by a PATCH request' })
    const enabled = await call(ctx.app, 'PATCH', `/v1/webhook_endpoints/${id}`, { key: biz.apiKey, body: { status: 'enabled' } })
    expect(enabled.body.data).toMatchObject({ status: 'enabled', disabled_reason: null })
    expect((await call(ctx.app, 'DELETE', `/v1/webhook_endpoints/${id}`, { key: biz.apiKey })).body).toEqual({ status: 'ok', id })
    expect((await call(ctx.app, 'GET', `/v1/webhook_endpoints/${id}`, { key: biz.apiKey })).status).toBe(404)
    expect((await call(ctx.app, 'DELETE', `/v1/webhook_endpoints/${id}`, { key: biz.apiKey })).status).toBe(404)
  })

  test("another business's endpoint is a 404 on every route", async () => {
    const other = await seedBusiness(ctx)
    const id = (await create(other.apiKey, valid())).body.data.id
    for (const [method, path, body] of [
      ['GET', `/v1/webhook_endpoints/${id}`],
      ['PATCH', `/v1/webhook_endpoints/${id}`, { description: 'x' }],
      ['DELETE', `/v1/webhook_endpoints/${id}`],
      ['GET', `/v1/webhook_endpoints/${id}/deliveries`],
      ['POST', `/v1/webhook_endpoints/${id}/rotate_secret`],
    ] as [string, string, unknown?][]) {
      expect((await call(ctx.app, method, path, { key: biz.apiKey, body })).status, `${method} ${path}`).toBe(404)
    }
    expect((await call(ctx.app, 'GET', '/v1/webhook_endpoints', { key: biz.apiKey })).body.data.map((e: any) => e.id)).not.toContain(id)
  })

  test('at most 16 endpoints per business (409)', async () => {
    const b = await seedBusiness(ctx)
    const answers = await Promise.all(Array.from({ length: 18 }, () => create(b.apiKey, valid())))
    expect(answers.filter((r) => r.status === 201).length).toBe(16)
    expect(answers.filter((r) => r.status === 409).length).toBe(2)
  })
})

describe('refusals', () => {
  test('the request-forgery guard refuses non-public hosts on url at create and PATCH (422 on url); the allow-list matches the host as written', async () => {
    for (const url of [
      'http://localhost:9/x',
      'http://[::1]:9/x',
      'http://0.0.0.0/x',
      'http://10.1.2.3/x',
      'http://169.254.169.254/latest',
      'http://192.168.1.1/',
      'http://127.0.0.2/x',
      'http://host.invalid/x',
      'ftp://127.0.0.1/x',
    ]) {
      const res = await create(biz.apiKey, valid({ url }))
      expect(res.status, `${url}: ${res.text}`).toBe(422)
      expect(res.body.errors[0].loc, url).toEqual(['body', 'url'])
    }
    const id = (await create(biz.apiKey, valid())).body.data.id
    const patched = await call(ctx.app, 'PATCH', `/v1/webhook_endpoints/${id}`, { key: biz.apiKey, body: { url: 'http://10.0.0.1/internal' } })
    expect(patched.status).toBe(422)
    expect(patched.body.errors[0].loc).toEqual(['body', 'url'])
    const strict = await createTestContext()
    try {
      const b = await seedBusiness(strict)
      const res = await call(strict.app, 'POST', '/v1/webhook_endpoints', { key: b.apiKey, body: valid() })
      expect(res.status, 'loopback without WEBHOOK_ALLOW_HOSTS').toBe(422)
    } finally {
      await strict.close()
    }
  })

  test('enabled_events may name only types the key can read (422 on enabled_events); unknown types and empty lists are 422', async () => {
    const leadsOnly = (await biz.key(['webhooks:write', 'leads:read'])).apiKey
    expect((await create(leadsOnly, valid({ enabled_events: ['lead.*', 'inquiry.created'] }))).status).toBe(201)
    for (const events of [['property.created'], ['lead.created', 'image.*'], ['*']]) {
      const res = await create(leadsOnly, valid({ enabled_events: events }))
      expect(res.status, events.join()).toBe(422)
      expect(res.body.errors[0].loc).toEqual(['body', 'enabled_events'])
    }
    for (const events of [[], ['lead.exploded'], ['lead'], ['lead.created', 'lead.created']]) {
      expect((await create(biz.apiKey, valid({ enabled_events: events }))).status, JSON.stringify(events)).toBe(422)
    }
    expect((await create(biz.apiKey, { ...valid(), secret: 'mine' })).status).toBe(422)
  })

  test('webhooks:write is required (403), and the CLI accepts the scope', async () => {
    const readOnly = (await biz.key(['leads:read', 'properties:read'])).apiKey
    expect((await create(readOnly, valid())).status).toBe(403)
    expect((await call(ctx.app, 'GET', '/v1/webhook_endpoints', { key: readOnly })).status).toBe(403)
    expect(parseScopes('leads:read,webhooks:write')).toEqual(['leads:read', 'webhooks:write'])
  })
})

describe('documentation', () => {
  const createDescription = async (app: TestContext['app']) => {
    const doc = (await (await app.handle(new Request('http://localhost/openapi.json'))).json()) as {
      paths: Record<string, Record<string, { description: string }>>
    }
    return doc.paths['/v1/webhook_endpoints'].post.description
  }

  test('the create route states the endpoint bound and the delivery terms this deployment is configured with', async () => {
    const defaults = await createDescription(ctx.app)
    expect(defaults).toContain('At most 16 endpoints per business (409).')
    expect(defaults).toContain('A 2xx within 10 s is a success; otherwise retries back off exponentially for 3 days;')
    expect(defaults).toContain('failing continuously for 3 days')
    const tuned = await createTestContext({ WEBHOOK_TIMEOUT_MS: '2500', WEBHOOK_DISABLE_AFTER_MS: String(6 * 3600_000) })
    try {
      const text = await createDescription(tuned.app)
      expect(text).toContain('A 2xx within 2.5 s is a success; otherwise retries back off exponentially for 6 h;')
      expect(text).toContain('failing continuously for 6 h')
    } finally {
      await tuned.close()
    }
  })
})
