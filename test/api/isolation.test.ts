/**
 * Tenancy and scopes, generated from the served OpenAPI document (api-spec §5.4–5.5), so an
 * operation added later is covered without editing this file:
 * - every operation with a path id, called with another business's full-scope key on a real
 *   resource of the first business: 404, and nothing of the first business changes;
 * - every list operation: another business's key sees none of the first business's rows;
 * - every operation with `x-required-scope`: a key holding every other scope gets 403 and
 *   changes nothing; a key holding only that scope gets past the scope check.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SCOPES, type Scope } from '../../shared/access/scopes'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { exampleOf, fillPath, loadDocument, operationsOf, pathParamsOf, type Json, type Operation } from '../fuzz/openapi-schema'
import { Resources, snapshotBusiness } from '../fuzz/resources'

let ctx: TestContext
let doc: Json
let ops: Operation[]
let a: SeededBusiness
let b: SeededBusiness
let resourcesA: Resources

beforeAll(async () => {
  ctx = await createTestContext()
  doc = await loadDocument(ctx.app)
  ops = operationsOf(doc)
  a = await seedBusiness(ctx)
  b = await seedBusiness(ctx)
  resourcesA = new Resources(ctx, doc, ops, a.apiKey)
})
afterAll(() => ctx.close())

/** A valid request for `op` on business A's resources (the body is the document's example). */
async function requestFor(op: Operation, key: string): Promise<{ path: string; body?: unknown; headers: Record<string, string> }> {
  const params = await resourcesA.paramsFor(op.path)
  const body = op.body ? exampleOf(doc, op.body.schema) : undefined
  return { path: fillPath(op.path, params), body, headers: { 'x-api-key': key } }
}

const label = (op: Operation) => `${op.operationId} (${op.method} ${op.path})`

describe('isolation between businesses (api-spec §5.5), generated from /openapi.json', () => {
  test('the document has operations with path ids to check', () => {
    expect(ops.filter((o) => pathParamsOf(o).length > 0).length).toBeGreaterThan(0)
  })

  test('another business’s full-scope key gets 404 on every operation with a path id, and nothing changes', async () => {
    const checked: string[] = []
    for (const op of ops.filter((o) => pathParamsOf(o).length > 0)) {
      const req = await requestFor(op, b.apiKey)
      const before = await snapshotBusiness(ctx, a.id)
      const res = await call(ctx.app, op.method, req.path, { body: req.body, headers: req.headers })
      expect(res.status, `${label(op)} with another business's key: ${res.text}`).toBe(404)
      expect(res.headers.get('content-type'), label(op)).toStartWith('application/problem+json')
      expect(await snapshotBusiness(ctx, a.id), `${label(op)} changed the other business's data`).toEqual(before)
      checked.push(op.operationId)
    }
    expect(checked.length).toBeGreaterThan(0)
  })

  test('list operations show another business none of the first business’s rows', async () => {
    const lists = ops.filter(
      (o) =>
        o.method === 'GET' &&
        pathParamsOf(o).length === 0 &&
        (o.responses['200']?.content?.['application/json']?.schema as Json)?.properties?.data?.type === 'array',
    )
    expect(lists.length).toBeGreaterThan(0)
    for (const op of lists) {
      // Make sure business A has something of this kind (the item path below the list).
      const item = ops.find((o) => o.method === 'GET' && o.path.startsWith(op.path + '/{') && pathParamsOf(o).length === 1)
      if (item) await resourcesA.paramsFor(item.path)
      const own = await call(ctx.app, 'GET', op.path, { key: a.apiKey })
      const foreign = await call(ctx.app, 'GET', op.path, { key: b.apiKey })
      expect(own.status, own.text).toBe(200)
      expect(foreign.status, foreign.text).toBe(200)
      if (item) expect(own.body.data.length, `${label(op)}: business A has rows`).toBeGreaterThan(0)
      expect(foreign.body.data, `${label(op)} leaks another business's rows`).toEqual([])
    }
  })
})

describe('scopes (api-spec §5.3–5.4), generated from /openapi.json', () => {
  test(
    'every operation declares its scope (x-required-scope), null only for GET /me ' +
      'and the event reads (contract §10.1: each key sees what its scopes can read)',
    () => {
      for (const op of ops) {
        expect(op.scope === null || (SCOPES as readonly string[]).includes(op.scope), label(op)).toBe(true)
        if (op.scope === null) expect(['getApiKeyContext', 'listEvents', 'getEvent']).toContain(op.operationId)
      }
    },
  )

  test('a key with every other scope gets 403 on every scoped operation, and nothing changes', async () => {
    for (const op of ops.filter((o) => o.scope !== null)) {
      const others = SCOPES.filter((s) => s !== op.scope)
      const { apiKey } = await a.key(others)
      const req = await requestFor(op, apiKey)
      const before = await snapshotBusiness(ctx, a.id)
      const res = await call(ctx.app, op.method, req.path, { body: req.body, headers: req.headers })
      expect(res.status, `${label(op)} without ${op.scope}: ${res.text}`).toBe(403)
      expect(res.body.detail).toContain(op.scope!)
      expect(await snapshotBusiness(ctx, a.id), `${label(op)} changed data on a 403`).toEqual(before)
    }
  })

  test('a key holding only the required scope gets past the scope check', async () => {
    for (const op of ops) {
      const scopes: Scope[] = op.scope === null ? ['leads:ingest'] : [op.scope as Scope]
      const { apiKey } = await a.key(scopes)
      const req = await requestFor(op, apiKey)
      const res = await call(ctx.app, op.method, req.path, { body: req.body, headers: { ...req.headers, 'idempotency-key': crypto.randomUUID() } })
      expect([401, 403].includes(res.status), `${label(op)} with only ${op.scope}: ${res.status} ${res.text}`).toBe(false)
    }
  })
})
