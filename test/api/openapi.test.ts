import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, createTestContext, type TestContext } from '../helpers/context'
import pkg from '../../package.json'

let ctx: TestContext
let doc: any
beforeAll(async () => {
  ctx = await createTestContext()
  doc = (await call(ctx.app, 'GET', '/openapi.json')).body
})
afterAll(() => ctx.close())

const operations = () => Object.entries<any>(doc.paths).flatMap(([path, item]) => Object.entries<any>(item).map(([method, op]) => ({ path, method, op })))

describe('GET /openapi.json (api-spec §9, contract §6)', () => {
  test('is OpenAPI 3.1 with info.version 1.2.0 (the contract version served) and the API key security schemes', () => {
    expect(doc.openapi).toStartWith('3.1')
    expect(doc.info.version).toBe('1.2.0')
    expect(doc.components.securitySchemes.ApiKeyHeader).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Api-Key' }))
  })

  test('every /v1 operation has an operationId, security, and problem+json errors', () => {
    // CORS preflights carry no key and answer only 204 (test/api/forms-cors.test.ts).
    const v1 = operations().filter((o) => o.path.startsWith('/v1/') && o.method !== 'options')
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

  test('/docs serves the human documentation page, its script from this API only', async () => {
    const res = await call(ctx.app, 'GET', '/docs')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('text/html')
    // The configuration is a script file of this origin (the page's policy runs no inline script).
    expect(res.text).toContain('<script src="/docs/init.js"></script>')
    const init = await call(ctx.app, 'GET', '/docs/init.js')
    expect(init.headers.get('content-type')).toStartWith('text/javascript')
    expect(init.text).toContain('"url":"/openapi.json"')
    expect(init.text).not.toMatch(/https?:\/\//)
    // Every URL the page names is a path on this host (test/api/docs-browser.test.ts checks what a browser really fetches).
    expect(res.text).not.toMatch(/(?:src|href)="(?!\/)|https?:\/\//)
    const { version } = await Bun.file(`${import.meta.dir}/../../node_modules/@scalar/api-reference/package.json`).json()
    expect(pkg.dependencies['@scalar/api-reference']).toBe(version)
    const bundlePath = `/docs/assets/scalar-${version}/standalone.js`
    expect(res.text).toContain(`<script src="${bundlePath}"></script>`)

    const bundle = await ctx.app.handle(new Request(`http://localhost${bundlePath}`))
    expect(bundle.status).toBe(200)
    expect(bundle.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(bundle.headers.get('content-type')).toStartWith('text/javascript')
    expect(await bundle.text()).toContain('createApiReference')
  }, 30_000)

  test('another version of the bundle is a 404 problem, never cached', async () => {
    const res = await call(ctx.app, 'GET', '/docs/assets/scalar-0.0.1/standalone.js')
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toStartWith('application/problem+json')
    expect(res.headers.get('cache-control')).toBe('no-store')
  })
})
