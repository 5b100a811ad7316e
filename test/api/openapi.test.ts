import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, createTestContext, type TestContext } from '../helpers/context'

let ctx: TestContext
let doc: any
beforeAll(async () => {
  ctx = await createTestContext()
  doc = (await call(ctx.app, 'GET', '/openapi.json')).body
})
afterAll(() => ctx.close())

const operations = () => Object.entries<any>(doc.paths).flatMap(([path, item]) => Object.entries<any>(item).map(([method, op]) => ({ path, method, op })))

describe('GET /openapi.json (api-spec §9, contract §6)', () => {
  test('is OpenAPI 3.1 with info.version 1.0.0 and the API key security schemes', () => {
    expect(doc.openapi).toStartWith('3.1')
    expect(doc.info.version).toBe('1.0.0')
    expect(doc.components.securitySchemes.ApiKeyHeader).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Api-Key' }))
  })

  test('every /v1 operation has an operationId, security, and problem+json errors', () => {
    const v1 = operations().filter((o) => o.path.startsWith('/v1/'))
    expect(v1.length).toBeGreaterThan(0)
    for (const { path, method, op } of v1) {
      expect(op.operationId, `${method} ${path}`).toBeString()
      expect(op.security, `${method} ${path}`).toEqual([{ ApiKeyHeader: [] }, { ApiKeyAuthorization: [] }])
      for (const status of ['401', '403', '404', '422', '500']) {
        expect(Object.keys(op.responses[status].content), `${method} ${path} ${status}`).toEqual(['application/problem+json'])
      }
    }
  })

  test('operationIds are unique and include getApiKeyContext', () => {
    const ids = operations().map((o) => o.op.operationId)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toContain('getApiKeyContext')
  })

  test('no Elysia coercion unions leak into the document', () => {
    expect(JSON.stringify(doc)).not.toContain('"format":"integer"')
    expect(JSON.stringify(doc)).not.toContain('"format":"numeric"')
  })

  test('/docs serves the human documentation page', async () => {
    const res = await call(ctx.app, 'GET', '/docs')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('text/html')
    expect(res.text).toContain('/openapi.json')
  })
})
