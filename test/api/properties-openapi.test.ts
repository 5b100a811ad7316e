import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { PropertyListResponse, PropertyResponse } from '../../shared/listings/schemas'
import { SUBTYPE_KEYS } from '../../shared/listings/subtypes'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createPublished } from '../helpers/properties'
import { resolve } from '../fuzz/openapi-schema'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

describe('OpenAPI document and response schemas', () => {
  test('property operations with their operationIds, Idempotency-Key header and subtype enum', async () => {
    const doc = (await call(ctx.app, 'GET', '/openapi.json')).body
    const ops = {
      'post /v1/properties': 'createProperty',
      'get /v1/properties': 'listProperties',
      'get /v1/properties/{property_id}': 'getProperty',
      'patch /v1/properties/{property_id}': 'updateProperty',
      'post /v1/properties/{property_id}/publish': 'publishProperty',
      'post /v1/properties/{property_id}/unpublish': 'unpublishProperty',
    }
    for (const [key, operationId] of Object.entries(ops)) {
      const [method, path] = key.split(' ')
      expect(doc.paths[path]?.[method]?.operationId, key).toBe(operationId)
    }
    const create = doc.paths['/v1/properties'].post
    expect(create.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'Idempotency-Key' }))
    // Bodies and enums are `$ref`s to named components.
    const subtype: any = resolve(doc, (resolve(doc, create.requestBody.content['application/json'].schema) as any).properties.subtype)
    expect([...subtype.enum].sort()).toEqual([...SUBTYPE_KEYS].sort())
  })

  test('the list answer declares count_relation (eq or gte) as required, and offset its bound with q (contract §11)', async () => {
    const doc = (await call(ctx.app, 'GET', '/openapi.json')).body
    const list = doc.paths['/v1/properties'].get
    const body: any = resolve(doc, list.responses['200'].content['application/json'].schema)
    expect(body.required).toContain('count_relation')
    const relation: any = resolve(doc, body.properties.count_relation)
    const values = relation.enum ?? relation.anyOf?.map((v: { const: string }) => v.const)
    expect([...values].sort()).toEqual(['eq', 'gte'])
    const offset = list.parameters.find((p: { name: string }) => p.name === 'offset')
    expect(offset.schema.description ?? offset.description).toContain('1,000')
  })

  test('list and retrieve bodies match their declared schemas', async () => {
    const id = await createPublished(ctx, biz.apiKey, {
      features: [{ key: 'pool', label: 'Piscina', value: true }],
      characteristics: { translations: { en: { title: 'Penthouse' } }, num_entrances: { total: 2 } },
    })
    const list = await call(ctx.app, 'GET', `/v1/properties?locations=${encodeURIComponent('[{"type":"point","position":{"lat":1,"lng":2}}]')}`, {
      key: biz.apiKey,
    })
    expect([...Value.Errors(PropertyListResponse, list.body)].map((e) => `${e.path}: ${e.message}`)).toEqual([])
    const one = await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: biz.apiKey })
    expect([...Value.Errors(PropertyResponse, one.body)].map((e) => `${e.path}: ${e.message}`)).toEqual([])
  })
})
