/**
 * `Idempotency-Key` in the OpenAPI document (api-spec §8, contract §15 on §6): spelt as documented
 * (clients generated from the document send the parameter's name as written and type-check it),
 * declared on exactly the operations that honour it (the `idempotent` flag of the operations
 * table), and honoured when sent with that spelling.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomUUID } from 'node:crypto'
import { OPERATIONS } from '../../shared/access/operations'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { exampleOf, fillPath, loadDocument, operationsOf, type Json } from '../fuzz/openapi-schema'
import { Resources } from '../fuzz/resources'

let ctx: TestContext
let doc: Json
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  doc = await loadDocument(ctx.app)
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const documented = (id: string) => {
  const op = OPERATIONS[id as keyof typeof OPERATIONS]
  return doc.paths[op.path.replace(/:(\w+)/g, '{$1}')][op.method.toLowerCase()]
}
const headerParams = (op: Json) => (op.parameters ?? []).filter((p: Json) => p.in === 'header')

describe('Idempotency-Key in /openapi.json', () => {
  test('declared as `Idempotency-Key` on exactly the operations the table marks idempotent', () => {
    const idempotent = Object.entries(OPERATIONS)
      .filter(([, op]) => op.idempotent)
      .map(([id]) => id)
    expect(idempotent).toEqual(expect.arrayContaining(['createProperty', 'createLead', 'createLeadInquiry', 'createImageUpload']))
    for (const [id, spec] of Object.entries(OPERATIONS)) {
      const params = headerParams(documented(id)).filter((p: Json) => p.name.toLowerCase() === 'idempotency-key')
      if (!spec.idempotent) {
        expect(params, id).toEqual([])
        continue
      }
      expect(params, id).toHaveLength(1)
      expect(params[0], id).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 200 } })
      expect(params[0].description, id).toContain('24')
    }
  })

  test('no operation spells a header parameter in lower case', () => {
    for (const item of Object.values<Json>(doc.paths)) {
      for (const op of Object.values<Json>(item)) {
        for (const p of headerParams(op)) expect(p.name, op.operationId).not.toBe(p.name.toLowerCase())
      }
    }
  })

  test('the answers a replay can give (2xx, and the refusals 404, 409, 422) of idempotent operations, and only those, document Idempotent-Replayed', () => {
    for (const [id, spec] of Object.entries(OPERATIONS)) {
      for (const [status, response] of Object.entries<Json>(documented(id).responses)) {
        const replayable = /^(2\d\d|404|409|422)$/.test(status)
        expect(Boolean(response.headers?.['Idempotent-Replayed']), `${id} ${status}`).toBe(spec.idempotent && replayable)
      }
    }
  })

  test('each documented operation honours the header sent with the documented spelling', async () => {
    const ops = operationsOf(await loadDocument(ctx.app)).filter((o) =>
      doc.paths[o.path][o.method.toLowerCase()].parameters?.some((p: Json) => p.name === 'Idempotency-Key'),
    )
    expect(ops.map((o) => o.operationId).sort()).toEqual(
      Object.entries(OPERATIONS)
        .filter(([, op]) => op.idempotent)
        .map(([id]) => id)
        .sort(),
    )
    const resources = new Resources(ctx, doc, operationsOf(doc), biz.apiKey)
    const { property_id } = await resources.paramsFor('/v1/properties/{property_id}')
    for (const op of ops) {
      const params = await resources.paramsFor(op.path)
      const example = op.body ? (exampleOf(doc, op.body.schema) as Record<string, unknown>) : undefined
      // The document's examples name property 42; this business's property stands in for it.
      const body = example && 'property_id' in example ? { ...example, property_id } : example
      const headers = { 'Idempotency-Key': randomUUID() }
      const first = await call(ctx.app, op.method, fillPath(op.path, params), { key: biz.apiKey, body, headers })
      expect(first.status, `${op.operationId}: ${first.text}`).toBeLessThan(300)
      const again = await call(ctx.app, op.method, fillPath(op.path, params), { key: biz.apiKey, body, headers })
      expect(again.headers.get('idempotent-replayed'), op.operationId).toBe('true')
      expect(again.status, op.operationId).toBe(first.status)
      expect(again.body, op.operationId).toEqual(first.body)
    }
  })
})
