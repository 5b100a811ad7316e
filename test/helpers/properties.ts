/** Property fixtures for the property tests: a valid creation body and create+publish helpers. */
import { expect } from 'bun:test'
import { call, type TestContext } from './context'

export function propertyBody(overrides: Record<string, unknown> = {}): Record<string, any> {
  return {
    operations: ['venta'],
    type: 'apartamento',
    subtype: 'atico',
    title: 'Ático con terraza',
    description: '<p>Luminoso</p>',
    pricing: { sale: 250000 },
    location: {
      city: 'Valencia',
      province: 'Valencia',
      postal_code: '46004',
      address: 'Calle de Colón 12, 3º B',
      full_address: 'Calle de Colón 12, 3º B, 46004 Valencia',
      coordinates: { latitude: 39.46987, longitude: -0.37634 },
      visibility: 'public',
    },
    area: { total: 95, usable: 82 },
    bedrooms: 3,
    bathrooms: 2,
    ...overrides,
  }
}

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
