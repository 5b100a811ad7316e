/** /openapi.json for contract §16: the key's kind, the form bodies (the same schema), 303/403/429 and their fields, the preflights. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, createTestContext, type TestContext } from '../helpers/context'

let ctx: TestContext
let doc: any
beforeAll(async () => {
  ctx = await createTestContext()
  doc = (await call(ctx.app, 'GET', '/openapi.json')).body
})
afterAll(() => ctx.close())

describe('/openapi.json, contract §16', () => {
  test('the two operations pages call take JSON or a form, by the same schema; others JSON only', () => {
    for (const path of ['/v1/leads/ingest', '/v1/leads/inquiries']) {
      const body = doc.paths[path].post.requestBody
      expect(Object.keys(body.content)).toEqual(['application/json', 'application/x-www-form-urlencoded'])
      expect(body.content['application/x-www-form-urlencoded'].schema).toEqual(body.content['application/json'].schema)
      expect(body.description).toContain('api_key')
      expect(body.description).toContain('_redirect')
      expect(body.description).toContain('_gotcha')
    }
    expect(Object.keys(doc.paths['/v1/leads'].post.requestBody.content)).toEqual(['application/json'])
  })

  test('303, 403 (origin-not-allowed) and 429 with Retry-After; the CORS and RateLimit fields on every answer of theirs', () => {
    for (const path of ['/v1/leads/ingest', '/v1/leads/inquiries']) {
      const { responses } = doc.paths[path].post
      expect(responses['303'].headers.Location).toBeDefined()
      expect(responses['403'].description).toContain('origin-not-allowed')
      expect(responses['429'].headers['Retry-After'].schema).toEqual({ type: 'integer', minimum: 1 })
      expect(responses['429'].content['application/problem+json'].schema).toEqual({ $ref: '#/components/schemas/Problem' })
      for (const [status, response] of Object.entries<any>(responses)) {
        for (const name of ['RateLimit-Policy', 'RateLimit', 'Access-Control-Allow-Origin', 'Access-Control-Expose-Headers', 'Vary'])
          expect(response.headers[name], `${path} ${status} ${name}`).toBeDefined()
      }
    }
    expect(doc.paths['/v1/leads'].post.responses['429']).toBeUndefined()
    expect(doc.paths['/v1/leads'].post.responses['201'].headers.RateLimit).toBeUndefined()
  })

  test('the preflights: OPTIONS, no key, 204 with their fields', () => {
    for (const [path, id] of [
      ['/v1/leads/ingest', 'preflightRentalLeadIngest'],
      ['/v1/leads/inquiries', 'preflightLeadInquiry'],
    ]) {
      const op = doc.paths[path].options
      expect(op.operationId).toBe(id)
      expect(op.security).toEqual([])
      expect(Object.keys(op.responses)).toEqual(['204'])
      expect(op.responses['204'].headers['Access-Control-Allow-Headers'].schema.const).toBe('Content-Type, X-Api-Key, Idempotency-Key')
      expect(op.responses['204'].headers['Access-Control-Max-Age'].schema.const).toBe('600')
    }
  })

  test('GET /me documents kind and origins; the key schemes name both prefixes', () => {
    const apiKey = doc.components.schemas.ApiKey
    expect(apiKey.required).toContain('kind')
    expect(apiKey.properties.kind).toEqual({ $ref: '#/components/schemas/KeyKind' })
    expect(doc.components.schemas.KeyKind.enum).toEqual(['secret', 'publishable'])
    expect(apiKey.properties.origins.type).toBe('array')
    expect(apiKey.required).not.toContain('origins')
    expect(doc.components.securitySchemes.ApiKeyHeader.description).toContain('AC_PUB_')
    expect(doc.info.version).toBe('1.2.0')
  })
})
