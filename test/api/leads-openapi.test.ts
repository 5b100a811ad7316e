import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, createTestContext, type TestContext } from '../helpers/context'
import { resolve } from '../fuzz/openapi-schema'

let ctx: TestContext
let doc: any
beforeAll(async () => {
  ctx = await createTestContext()
  doc = (await call(ctx.app, 'GET', '/openapi.json')).body
})
afterAll(() => ctx.close())

/** Schemas are `$ref`s to named components. */
const deref = (schema: any): any => resolve(doc, schema)

describe('lead operations in /openapi.json', () => {
  test('operationIds and scopes of api-spec §4', () => {
    const ops: [string, string, string, string][] = [
      ['/v1/leads', 'get', 'listLeads', 'leads:read'],
      ['/v1/leads', 'post', 'createLead', 'leads:write'],
      ['/v1/leads/{lead_id}', 'get', 'getLead', 'leads:read'],
      ['/v1/leads/{lead_id}', 'patch', 'updateLead', 'leads:write'],
      ['/v1/leads/ingest', 'post', 'ingestRentalLead', 'leads:ingest'],
    ]
    for (const [path, method, id, scope] of ops) {
      const op = doc.paths[path][method]
      expect(op.operationId).toBe(id)
      expect(op['x-required-scope']).toBe(scope)
      expect(op.tags).toEqual(['Leads'])
      expect(op.summary).toBeString()
    }
  })

  test('createLead declares Idempotency-Key, 201 created-resource and the 409 problem', () => {
    const op = doc.paths['/v1/leads'].post
    expect(op.parameters.some((p: any) => p.in === 'header' && p.name === 'Idempotency-Key')).toBe(true)
    expect(deref(op.responses['201'].content['application/json'].schema)).toMatchObject({ properties: { status: { const: 'ok' }, id: { type: 'integer' } } })
    expect(Object.keys(op.responses['409'].content)).toEqual(['application/problem+json'])
  })

  test('ingestRentalLead documents its 500 (malformed budget) and 422 (phone) with examples', () => {
    const op = doc.paths['/v1/leads/ingest'].post
    const r500 = op.responses['500'].content['application/problem+json']
    expect(r500.schema).toEqual({ $ref: '#/components/schemas/Problem' })
    expect(r500.example.detail).toStartWith('Invalid budget')
    expect(op.responses['422'].content['application/problem+json'].example.detail).toBe('Invalid phone number. Use international format, e.g. +34600111222')
    expect(op['x-problem-responses']).toBeUndefined()
    const body = deref(op.requestBody.content['application/json'].schema)
    expect(body.required.sort()).toEqual(['contact', 'createdAt', 'id', 'search', 'source', 'sourcePage'])
    expect(deref(body.properties.contact).required.sort()).toEqual(['name', 'phone'])
    expect(deref(op.responses['200'].content['application/json'].schema).properties).toHaveProperty('authenticated_as')
  })

  test('the lead object marks nullable fields and lists every field of contract §4', () => {
    const schema = deref(deref(doc.paths['/v1/leads/{lead_id}'].get.responses['200'].content['application/json'].schema).properties.data)
    expect(Object.keys(schema.properties)).toEqual([
      'id',
      'type',
      'name',
      'email',
      'phone',
      'source',
      'operation',
      'property_types',
      'rating',
      'urgency',
      'budget_max',
      'min_bedrooms',
      'search_location',
      'notes',
      'created_at',
      'updated_at',
    ])
    expect(schema.required).toHaveLength(16)
  })
})
