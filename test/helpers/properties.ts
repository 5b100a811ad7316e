/** Property fixtures for the property tests: a valid creation body and create+publish helpers. */
import { expect } from 'bun:test'
import { call, type TestContext } from './context'
import { propertyBody } from './property-body'

export { propertyBody }

export async function createProperty(ctx: TestContext, key: string, overrides: Record<string, unknown> = {}): Promise<number> {
  const res = await call(ctx.app, 'POST', '/v1/properties', { key, body: propertyBody(overrides) })
  expect(res.status, res.text).toBe(201)
  return res.body.id
}

export async function createPublished(ctx: TestContext, key: string, overrides: Record<string, unknown> = {}): Promise<number> {
  const id = await createProperty(ctx, key, overrides)
  const res = await call(ctx.app, 'POST', `/v1/properties/${id}/publish`, { key })
  expect(res.status, res.text).toBe(200)
  return id
}
