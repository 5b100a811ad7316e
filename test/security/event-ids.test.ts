/**
 * An event id that names no event visible to the key is a 404 whatever its shape (contract §15
 * §10.1): any length, any characters, malformed percent-encodings included, on GET
 * /events/{id} and POST /events/{id}/redeliver. A missing scope still answers 403 first.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

/** Path segments as sent on the wire (already percent-encoded where they are). */
const SHAPES = [
  'evt_' + 'x'.repeat(4996),
  'x'.repeat(5000),
  'evt_' + 'a'.repeat(65),
  '%41'.repeat(2000),
  'evt_doesnotexist',
  'nope',
  '1',
  'evt_',
  '%FF',
  '%C0%AE',
  '%ZZ',
  '%',
  '%E2%82',
  'evt_%00',
  '%00',
  '%20',
  '%E2%82%AC',
  'evt_%F0%9F%8F%A0',
  'a%2Fb',
  '%25',
  "evt_'%20or%201=1--",
  'evt_%3Cscript%3E',
  '%5C',
  '~',
  '@',
  ':',
]

describe('event ids of any shape (contract §15 §10.1)', () => {
  test('GET /events/{id}: 404 problem+json, never 422', async () => {
    for (const id of SHAPES) {
      const res = await call(ctx.app, 'GET', `/v1/events/${id}`, { key: biz.apiKey })
      expect(res.status, `${id.slice(0, 40)} (${id.length}): ${res.text.slice(0, 200)}`).toBe(404)
      expect(res.headers.get('content-type')).toContain('application/problem+json')
    }
  })

  test('POST /events/{id}/redeliver: 404 too; a key without webhooks:write gets its 403 first', async () => {
    const readOnly = (await biz.key(['leads:read'])).apiKey
    for (const id of SHAPES) {
      const res = await call(ctx.app, 'POST', `/v1/events/${id}/redeliver`, { key: biz.apiKey, body: { endpoint_id: 1 } })
      expect(res.status, `${id.slice(0, 40)} (${id.length}): ${res.text.slice(0, 200)}`).toBe(404)
      expect((await call(ctx.app, 'POST', `/v1/events/${id}/redeliver`, { key: readOnly, body: { endpoint_id: 1 } })).status, id.slice(0, 40)).toBe(403)
    }
  })
})
