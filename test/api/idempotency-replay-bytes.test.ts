/**
 * Contract §15 (§6 limits): a replay of an idempotent request is the first answer's
 * body byte for byte — stored as text, not jsonb, which reordered its keys — and every replay,
 * refusals included, carries `Idempotent-Replayed: true`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { call, createTestContext, seedBusiness, type ApiResponse, type SeededBusiness, type TestContext } from '../helpers/context'
import { leadBody, uniquePhone } from '../helpers/leads'
import { inquiryBody } from '../helpers/outreach'
import { createProperty, propertyBody } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
let propertyId: number
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  propertyId = await createProperty(ctx, biz.apiKey)
})
afterAll(() => ctx.close())

let n = 0
const freshKey = () => `replay-${Date.now()}-${n++}`

async function twice(path: string, body: unknown, key = freshKey()): Promise<[ApiResponse, ApiResponse]> {
  const send = () => call(ctx.app, 'POST', path, { key: biz.apiKey, body, headers: { 'idempotency-key': key } })
  const first = await send()
  return [first, await send()]
}

function expectReplay(first: ApiResponse, again: ApiResponse, what: string): void {
  expect(first.headers.get('idempotent-replayed'), what).toBeNull()
  expect(again.status, `${what}: ${again.text}`).toBe(first.status)
  expect(again.text, what).toBe(first.text)
  expect(again.headers.get('content-type'), what).toBe(first.headers.get('content-type'))
  expect(again.headers.get('idempotent-replayed'), what).toBe('true')
  expect(again.headers.get('cache-control'), what).toBe('no-store')
}

describe('replays are the first answer byte for byte', () => {
  test('successful creates on every idempotent operation', async () => {
    const cases: [string, unknown][] = [
      ['/v1/properties', propertyBody()],
      ['/v1/leads', leadBody()],
      ['/v1/leads/inquiries', inquiryBody({ property_id: propertyId, contact: { name: 'Ana García', phone: uniquePhone(), email: `ana.${n}@example.com` } })],
      [
        `/v1/properties/${propertyId}/images/uploads`,
        {
          files: [
            { filename: 'salón.jpg', content_type: 'image/jpeg', size: 1234 },
            { filename: 'b.png', content_type: 'image/png', size: 99 },
          ],
        },
      ],
    ]
    for (const [path, body] of cases) {
      const [first, again] = await twice(path, body)
      expect(first.status, `${path}: ${first.text}`).toBeLessThan(300)
      expectReplay(first, again, path)
    }
  })

  test('stored refusals: a 422 and a 409 Duplicate contact, with the header and the same bytes', async () => {
    const [first422, again422] = await twice('/v1/properties', propertyBody({ operations: ['venta', 'alquiler'] }))
    expect(first422.status, first422.text).toBe(422)
    expectReplay(first422, again422, '422')
    const taken = leadBody()
    expect((await call(ctx.app, 'POST', '/v1/leads', { key: biz.apiKey, body: taken })).status).toBe(201)
    const [first409, again409] = await twice('/v1/leads', { ...leadBody(), phone: taken.phone })
    expect(first409.status, first409.text).toBe(409)
    expect(first409.body.existing_id).toBeNumber()
    expectReplay(first409, again409, '409')
  })

  test('every later replay is the same bytes too, refusals included', async () => {
    for (const body of [leadBody(), { ...leadBody(), phone: 'not a phone' }]) {
      const key = freshKey()
      const [first] = await twice('/v1/leads', body, key)
      for (let i = 0; i < 3; i++) {
        const again = await call(ctx.app, 'POST', '/v1/leads', { key: biz.apiKey, body, headers: { 'idempotency-key': key } })
        expectReplay(first, again, `${first.status}, replay ${i + 2}`)
      }
    }
  })

  test('generated image-upload requests (property-based): every replay is the same bytes with the header', async () => {
    const file = fc.record({
      // biome-ignore lint/suspicious/noControlCharactersInRegex: file names with control characters are refused, so none is generated
      filename: fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }).filter((s) => s.trim().length > 0 && !/[\u0000-\u001f]/.test(s)),
      content_type: fc.constantFrom('image/jpeg', 'image/png', 'image/webp'),
      size: fc.integer({ min: 1, max: 26_214_400 }),
    })
    await fc.assert(
      fc.asyncProperty(
        fc.array(file, { minLength: 1, maxLength: 4 }),
        fc.string({ minLength: 1, maxLength: 60, unit: 'grapheme-ascii' }),
        async (files, suffix) => {
          const [first, again] = await twice(`/v1/properties/${propertyId}/images/uploads`, { files }, `${freshKey()}-${suffix}`)
          expectReplay(first, again, JSON.stringify(files))
        },
      ),
      { numRuns: 40 },
    )
  }, 60_000)
})
