/**
 * The key is read from the two documented forms only, `X-Api-Key: <key>` and
 * `Authorization: ApiKey <key>`. A bare key in Authorization, or any other scheme, is a 401.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const me = (headers: Record<string, string>) => call(ctx.app, 'GET', '/v1/me', { headers })

describe('API key headers', () => {
  test('the documented forms work (the scheme name is case-insensitive, as every HTTP auth scheme)', async () => {
    for (const headers of [
      { 'x-api-key': biz.apiKey },
      { authorization: `ApiKey ${biz.apiKey}` },
      { authorization: `apikey ${biz.apiKey}` },
      { authorization: `APIKEY  ${biz.apiKey}` },
    ] as Record<string, string>[]) {
      const res = await me(headers)
      expect(res.status, `${JSON.stringify(headers)}: ${res.text}`).toBe(200)
    }
  })

  test('a bare key in Authorization is a 401 naming the expected form', async () => {
    const res = await me({ authorization: biz.apiKey })
    expect(res.status, res.text).toBe(401)
    expect(res.headers.get('content-type')).toStartWith('application/problem+json')
    expect(res.body.detail).toMatch(/Malformed Authorization header/)
    expect(res.body.detail).toContain('ApiKey <key>')
  })

  test('any other scheme or shape around a valid key is a 401 (property-based)', async () => {
    const prefixes = fc.oneof(
      fc.constantFrom(
        '',
        ' ',
        'Bearer ',
        'Basic ',
        'Token ',
        'Key ',
        'ApiKey',
        'ApiKey:',
        'ApiKey=',
        'Api-Key ',
        'ApiKeys ',
        'X-Api-Key ',
        'X-Api-Key: ',
        'ApiKey ApiKey ',
        '"ApiKey" ',
        'ApiKey\t',
      ),
      fc.string({ maxLength: 12 }).filter((s) => !/^\s*apikey[ \t]+/i.test(s)),
    )
    const suffixes = fc.constantFrom('', ' extra', ',', ', ApiKey other')
    await fc.assert(
      fc.asyncProperty(prefixes, suffixes, async (prefix, suffix) => {
        const value = `${prefix}${biz.apiKey}${suffix}`
        // "ApiKey\t<key>" is the documented form with a tab as the space: it may pass.
        if (/^\s*apikey[ \t]+AC_LIVE_[^\s,]+\s*$/i.test(value)) return
        const res = await me({ authorization: value })
        expect(res.status, `Authorization: ${JSON.stringify(value)} → ${res.text}`).toBe(401)
      }),
      { numRuns: 300 },
    )
  })

  test('an empty or whitespace X-Api-Key is a 401 even with a valid Authorization header', async () => {
    // X-Api-Key, when sent, is the key: an empty one is not silently replaced by another header.
    for (const value of ['', ' ']) {
      const res = await me({ 'x-api-key': value, authorization: `ApiKey ${biz.apiKey}` })
      expect(res.status, JSON.stringify(value)).toBe(401)
    }
  })
})
