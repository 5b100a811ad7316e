/**
 * A numeric path id is written `[1-9][0-9]*` and is at most 2147483647 (our ids are PostgreSQL
 * integers); every other spelling (`0x1`, `1e0`, `+1`, ` 1`, `01`, `1.0`, which a number
 * coercion would read as 1) is a 422 naming `["path","<name>"]`, on every operation with one.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { MAX_ID } from '../../shared/platform/schemas'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createLead } from '../helpers/leads'
import { createProperty } from '../helpers/properties'
import { loadDocument, operationsOf, type Operation } from '../fuzz/openapi-schema'

let ctx: TestContext
let biz: SeededBusiness
let leadId: number
let propertyId: number
let ops: Operation[]
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  leadId = await createLead(ctx, biz.apiKey)
  propertyId = await createProperty(ctx, biz.apiKey)
  ops = operationsOf(await loadDocument(ctx.app)).filter((op) => /\{(property_id|lead_id)\}/.test(op.path))
})
afterAll(() => ctx.close())

const isCanonical = (s: string) => /^[1-9][0-9]*$/.test(s) && Number(s) <= MAX_ID

/** Other spellings of `id` that Number() reads as the same number. */
const respellings = (id: number) => [
  `0x${id.toString(16)}`,
  `${id}e0`,
  `+${id}`,
  `%20${id}`,
  `${id}%20`,
  `%09${id}`,
  `0${id}`,
  `${id}.0`,
  `${id}.`,
  `0b${id.toString(2)}`,
  `0o${id.toString(8)}`,
  `${id * 10}e-1`,
]

async function expectPathError(method: string, path: string, name: string, body?: unknown): Promise<void> {
  const res = await call(ctx.app, method, path, { key: biz.apiKey, body })
  expect(res.status, `${method} ${path}: ${res.text}`).toBe(422)
  expect(
    res.body.errors.map((e: { loc: unknown[] }) => e.loc),
    `${method} ${path}`,
  ).toContainEqual(['path', name])
}

describe('numeric path ids', () => {
  test('other spellings of an existing lead id are a 422 naming the parameter, not the lead', async () => {
    expect((await call(ctx.app, 'GET', `/v1/leads/${leadId}`, { key: biz.apiKey })).status).toBe(200)
    for (const spelling of respellings(leadId)) await expectPathError('GET', `/v1/leads/${spelling}`, 'lead_id')
  })

  test('every operation with a numeric path id refuses the other spellings and ids past 2147483647', async () => {
    expect(ops.length).toBeGreaterThanOrEqual(8)
    const bodies: Record<string, unknown> = {
      updateLead: { name: 'X' },
      updateProperty: { title: 'X' },
      createImageUpload: { files: [{ filename: 'a.png', content_type: 'image/png', size: 10 }] },
    }
    for (const op of ops) {
      for (const name of ['property_id', 'lead_id'].filter((n) => op.path.includes(`{${n}}`))) {
        const real = name === 'lead_id' ? leadId : propertyId
        for (const spelling of [...respellings(real), '2147483648', '99999999999999999999', '0', '-1']) {
          const path = op.path
            .replace(`{${name}}`, spelling)
            .replace(/\{property_id\}/, String(propertyId))
            .replace('{upload_id}', '00000000-0000-4000-8000-000000000000')
          await expectPathError(op.method, path, name, bodies[op.operationId])
        }
      }
    }
  })

  test('any string: canonical ids in range pass validation, everything else is a 422 on the path (property-based)', async () => {
    const candidates = fc.oneof(
      fc.string({ maxLength: 14 }),
      fc.stringMatching(/^[+-]?0*[0-9]{1,12}(\.[0-9]*)?(e[+-]?[0-9])?$/),
      fc.integer({ min: 1, max: MAX_ID }).map(String),
      fc.bigInt({ min: BigInt(MAX_ID) - 5n, max: BigInt(MAX_ID) + 5n }).map(String),
    )
    await fc.assert(
      fc.asyncProperty(candidates, async (s) => {
        const res = await call(ctx.app, 'GET', `/v1/leads/${encodeURIComponent(s)}`, { key: biz.apiKey })
        if (s === '' || s === '.' || s === '..') return // another route, or none
        if (isCanonical(s)) expect(res.status, `${JSON.stringify(s)}: ${res.text}`).toBe(Number(s) === leadId ? 200 : 404)
        else {
          expect(res.status, `${JSON.stringify(s)}: ${res.text}`).toBe(422)
          expect(res.body.errors).toContainEqual(expect.objectContaining({ loc: ['path', 'lead_id'] }))
        }
      }),
      { numRuns: 500 },
    )
  })

  test('a key without the scope still gets 403 before the path id is judged', async () => {
    const readOnly = await biz.key(['leads:read'])
    const res = await call(ctx.app, 'POST', '/v1/properties/0x1/publish', { key: readOnly.apiKey })
    expect(res.status, res.text).toBe(403)
  })
})
