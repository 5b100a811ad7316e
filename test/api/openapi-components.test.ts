/**
 * The OpenAPI document as generators read it (conventions §13): named component schemas instead
 * of inline shapes, one security requirement per operation with the two accepted schemes as
 * alternatives, a `servers` entry with a real base URL template, and a document that a real
 * OpenAPI 3.1 validator accepts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import { buildOpenApiDocument } from '../../api/openapi'
import { OPERATIONS } from '../../shared/access/operations'
import { call, createTestContext, seedBusiness, type TestContext } from '../helpers/context'
import { validate } from '../fuzz/openapi-schema'

let ctx: TestContext
let doc: any
beforeAll(async () => {
  ctx = await createTestContext()
  doc = (await call(ctx.app, 'GET', '/openapi.json')).body
})
afterAll(() => ctx.close())

const operations = () => Object.entries<any>(doc.paths).flatMap(([path, item]) => Object.entries<any>(item).map(([method, op]) => ({ path, method, op })))
const v1 = () => operations().filter((o) => o.path.startsWith('/v1/'))
const REF = /^#\/components\/schemas\/([A-Za-z0-9]+)$/

/** Every schema reachable from `node`, with where it is, not descending into examples. */
function* schemasIn(node: any, at: string): Generator<[string, any]> {
  if (!node || typeof node !== 'object') return
  yield [at, node]
  for (const key of ['properties', 'patternProperties']) for (const [k, s] of Object.entries<any>(node[key] ?? {})) yield* schemasIn(s, `${at}.${key}.${k}`)
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) for (const [i, s] of (node[key] ?? []).entries()) yield* schemasIn(s, `${at}.${key}[${i}]`)
  for (const key of ['items', 'additionalProperties', 'not']) if (typeof node[key] === 'object') yield* schemasIn(node[key], `${at}.${key}`)
}

/** Every schema position of the operations: parameters, bodies, responses and their headers. */
function* operationSchemas(): Generator<[string, any]> {
  for (const { path, method, op } of operations()) {
    const at = `${method} ${path}`
    for (const p of op.parameters ?? []) yield* schemasIn(p.schema, `${at} ${p.in} ${p.name}`)
    for (const [type, c] of Object.entries<any>(op.requestBody?.content ?? {})) yield* schemasIn(c.schema, `${at} body ${type}`)
    for (const [status, r] of Object.entries<any>(op.responses ?? {})) {
      for (const [type, c] of Object.entries<any>(r.content ?? {})) yield* schemasIn(c.schema, `${at} ${status} ${type}`)
      for (const [name, h] of Object.entries<any>(r.headers ?? {})) yield* schemasIn(h.schema, `${at} ${status} header ${name}`)
    }
  }
}

describe('named component schemas', () => {
  test('the resources integrators handle are components under their own names', () => {
    const names = Object.keys(doc.components.schemas)
    expect(names).toEqual(
      expect.arrayContaining([
        'Property',
        'PropertyInput',
        'PropertyUpdateInput',
        'PropertyListResponse',
        'Lead',
        'LeadInput',
        'LeadUpdateInput',
        'InquiryInput',
        'LeadInquiryResponse',
        'UploadSession',
        'CreatedResponse',
        'ApiKeyContext',
        'Problem',
        'ValidationProblem',
        'PropertySubtypeKey',
        'PropertyType',
      ]),
    )
    for (const name of names) expect(name).toMatch(/^[A-Z][A-Za-z0-9]*$/)
    const body = (id: keyof typeof OPERATIONS) => {
      const o = OPERATIONS[id]
      return doc.paths[o.path.replace(/:(\w+)/g, '{$1}')][o.method.toLowerCase()].requestBody.content['application/json'].schema
    }
    expect(body('createProperty')).toEqual({ $ref: '#/components/schemas/PropertyInput' })
    expect(body('updateProperty')).toEqual({ $ref: '#/components/schemas/PropertyUpdateInput' })
    expect(body('createLead')).toEqual({ $ref: '#/components/schemas/LeadInput' })
    expect(body('createLeadInquiry')).toEqual({ $ref: '#/components/schemas/InquiryInput' })
    expect(doc.components.schemas.PropertyResponse.properties.data).toEqual({ $ref: '#/components/schemas/Property' })
    expect(doc.components.schemas.PropertyListResponse.properties.data.items).toEqual({ $ref: '#/components/schemas/Property' })
    expect(doc.components.schemas.LeadDetailResponse.properties.data).toEqual({ $ref: '#/components/schemas/Lead' })
    expect(doc.components.schemas.ImageUploadStatusResponse.properties.data).toEqual({ $ref: '#/components/schemas/UploadSession' })
  })

  test('every request body and JSON answer of /v1 is a $ref to a component', () => {
    for (const { path, method, op } of v1()) {
      const bodies = Object.values<any>(op.requestBody?.content ?? {}).map((c) => ['body', c.schema])
      const answers = Object.entries<any>(op.responses).flatMap(([status, r]) =>
        Object.values<any>(r.content ?? {})
          .filter((c) => c.schema)
          .map((c) => [status, c.schema]),
      )
      for (const [what, schema] of [...bodies, ...answers]) expect(Object.keys(schema), `${method} ${path} ${what}`).toEqual(['$ref'])
    }
  })

  test('no titled (named) schema is left inline in the operations', () => {
    const inline = [...operationSchemas()].filter(([, s]) => typeof s.title === 'string').map(([at, s]) => `${at}: ${s.title}`)
    expect(inline).toEqual([])
  })

  test('every $ref resolves, and every component is used', () => {
    const text = JSON.stringify(doc)
    const refs = new Set([...text.matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]))
    for (const ref of refs) {
      const name = REF.exec(ref)?.[1]
      expect(name, ref).toBeDefined()
      expect(doc.components.schemas[name!], ref).toBeDefined()
    }
    for (const name of Object.keys(doc.components.schemas)) expect(refs.has(`#/components/schemas/${name}`), name).toBe(true)
  })

  test('the names are stable: building the document again gives the same one', () => {
    const build = () => JSON.parse(JSON.stringify(buildOpenApiDocument(ctx.app)))
    const again = build()
    expect(again).toEqual(build())
    // The served one may default its server to PUBLIC_URL; everything else is the same.
    expect({ ...again, servers: undefined }).toEqual({ ...doc, servers: undefined })
  })

  test('real answers still match the schemas reached through $ref', async () => {
    const biz = await seedBusiness(ctx)
    const me = await call(ctx.app, 'GET', '/v1/me', { key: biz.apiKey })
    expect(validate(doc, doc.paths['/v1/me'].get.responses['200'].content['application/json'].schema, me.body)).toEqual([])
    const missing = await call(ctx.app, 'GET', '/v1/leads/2147483647', { key: biz.apiKey })
    expect(validate(doc, doc.paths['/v1/leads/{lead_id}'].get.responses['404'].content['application/problem+json'].schema, missing.body)).toEqual([])
  })
})

describe('security and servers', () => {
  test('each /v1 operation has one requirement list: X-Api-Key or Authorization, never both; a CORS preflight none', () => {
    expect(doc.security).toBeUndefined()
    for (const { path, method, op } of v1()) {
      expect(op.security, `${method} ${path}`).toEqual(method === 'options' ? [] : [{ ApiKeyHeader: [] }, { ApiKeyAuthorization: [] }])
    }
    expect(
      v1()
        .filter((o) => o.method === 'options')
        .map((o) => o.path)
        .sort(),
    ).toEqual(['/v1/leads/ingest', '/v1/leads/inquiries'])
  })

  test('the server variables default to the deployment’s PUBLIC_URL when given, else localhost:3000', () => {
    const variables = (publicUrl?: string) => buildOpenApiDocument(ctx.app, '1.0.0', publicUrl).servers[0].variables
    expect(variables('https://api.example.com')).toMatchObject({ scheme: { default: 'https' }, host: { default: 'api.example.com' } })
    expect(variables('http://127.0.0.1:8080')).toMatchObject({ scheme: { default: 'http' }, host: { default: '127.0.0.1:8080' } })
    expect(variables()).toMatchObject({ scheme: { default: 'http' }, host: { default: 'localhost:3000' } })
  })

  test('liveness, readiness, metrics and the feed need no key, and document their answers', () => {
    const ops = operations().filter((o) => !o.path.startsWith('/v1/'))
    expect(ops.map((o) => o.path).sort()).toEqual(['/feeds/{token}/kyero.xml', '/healthz', '/metrics', '/readyz'])
    for (const { op } of ops) expect(op.security ?? []).toEqual([])
    const responses = (path: string) => doc.paths[path].get.responses
    expect(Object.keys(responses('/healthz'))).toEqual(['200'])
    expect(Object.keys(responses('/readyz')).sort()).toEqual(['200', '503'])
    expect(responses('/readyz')['503'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Readiness' })
    expect(Object.keys(responses('/metrics')['200'].content)).toEqual(['text/plain'])
    expect(responses('/metrics')['200'].description).toContain('Prometheus text exposition format')
    const feed = responses('/feeds/{token}/kyero.xml')
    expect(Object.keys(feed).sort()).toEqual(['200', '304', '404'])
    expect(Object.keys(feed['200'].content)).toEqual(['application/xml'])
    expect(doc.paths['/feeds/{token}/kyero.xml'].get.operationId).toBe('getKyeroFeed')
  })

  test('servers is a base URL template with scheme and host variables; paths keep /v1', () => {
    expect(doc.servers).toHaveLength(1)
    const [server] = doc.servers
    expect(server.url).toBe('{scheme}://{host}')
    expect(server.variables.scheme.enum).toEqual(['http', 'https'])
    expect(server.variables.scheme.enum).toContain(server.variables.scheme.default)
    expect(server.variables.host.default).toMatch(/^[a-z0-9.-]+(:\d+)?$/)
    expect(
      Object.keys(doc.paths)
        .filter((p) => !['/healthz', '/readyz', '/metrics', '/feeds/{token}/kyero.xml'].includes(p))
        .every((p) => p.startsWith('/v1/')),
    ).toBe(true)
    expect(doc.info.description).toContain('{scheme}://{host}')
  })
})

describe('a real OpenAPI 3.1 validator', () => {
  test('accepts the document', async () => {
    const validator = new Validator()
    const result = await validator.validate(structuredClone(doc))
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe('3.1')
  })
})
