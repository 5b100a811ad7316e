import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createPublished, propertyBody } from '../helpers/properties'

let ctx: TestContext
let owner: SeededBusiness
let stranger: SeededBusiness
let id: number
beforeAll(async () => {
  ctx = await createTestContext()
  owner = await seedBusiness(ctx)
  stranger = await seedBusiness(ctx)
  id = await createPublished(ctx, owner.apiKey)
})
afterAll(() => ctx.close())

const snapshot = async () => {
  const [row] = await ctx.deps.database.db.execute(sql`select p.title, p.published_at, p.updated_at, c.doc::text as doc
      from properties p left join catalogue_entries c on c.property_id = p.id where p.id = ${id}`)
  return row
}

describe('tenancy: another business’s key sees nothing and changes nothing', () => {
  test('every property endpoint answers 404 and the property is unchanged', async () => {
    const before = await snapshot()
    const calls: [string, string, unknown?][] = [
      ['GET', `/v1/properties/${id}`],
      ['PATCH', `/v1/properties/${id}`, { title: 'Hackeado' }],
      ['POST', `/v1/properties/${id}/publish`],
      ['POST', `/v1/properties/${id}/unpublish`],
    ]
    for (const [method, path, body] of calls) {
      const res = await call(ctx.app, method, path, { key: stranger.apiKey, body })
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(404)
      expect(res.body.detail).toBe('Property not found')
    }
    expect(await snapshot()).toEqual(before)
    const list = await call(ctx.app, 'GET', '/v1/properties', { key: stranger.apiKey })
    expect(list.body.count).toBe(0)
    expect(list.body.authenticated_as).toBe(stranger.name)
  })

  test('missing ids answer the same 404 as foreign ones', async () => {
    for (const [method, path] of [
      ['GET', '/v1/properties/2147483000'],
      ['POST', '/v1/properties/2147483000/publish'],
      ['POST', '/v1/properties/2147483000/unpublish'],
    ]) {
      const res = await call(ctx.app, method, path, { key: owner.apiKey })
      expect(res.status, res.text).toBe(404)
      expect(res.body.detail).toBe('Property not found')
    }
  })

  test('scopes: read needs properties:read, writes need properties:write; no key is 401', async () => {
    const readOnly = await owner.key(['properties:read'])
    const writeOnly = await owner.key(['properties:write'])
    expect((await call(ctx.app, 'POST', '/v1/properties', { key: readOnly.apiKey, body: propertyBody() })).status).toBe(403)
    expect((await call(ctx.app, 'PATCH', `/v1/properties/${id}`, { key: readOnly.apiKey, body: { title: 'x' } })).status).toBe(403)
    expect((await call(ctx.app, 'POST', `/v1/properties/${id}/publish`, { key: readOnly.apiKey })).status).toBe(403)
    expect((await call(ctx.app, 'GET', '/v1/properties', { key: writeOnly.apiKey })).status).toBe(403)
    expect((await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: writeOnly.apiKey })).status).toBe(403)
    expect((await call(ctx.app, 'GET', '/v1/properties', {})).status).toBe(401)
    expect((await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: readOnly.apiKey })).status).toBe(200)
  })
})
