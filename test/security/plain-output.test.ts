/**
 * No output writes a number in exponent notation (contract §15 §3 prices): JSON answers, stored
 * and delivered events and the Kyero feed write 0.0000001, never 1e-7, whatever
 * valid number a price, area or coordinate holds.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createFeed } from '../../shared/feeds/operations'
import { MAX_PRICE } from '../../shared/platform/schemas'
import { runEndpoint } from '../../shared/webhooks/delivery'
import { relayAll } from '../helpers/relay'
import { call, createTestContext, seedBusiness, type TestContext } from '../helpers/context'
import { leadBody } from '../helpers/leads'
import { propertyBody } from '../helpers/properties'
import { createEndpoint, startReceiver, type Receiver } from '../helpers/webhooks'

let ctx: TestContext
let receiver: Receiver
beforeAll(async () => {
  ctx = await createTestContext({ WEBHOOK_ALLOW_HOSTS: '127.0.0.1' })
  receiver = startReceiver()
})
afterAll(async () => {
  receiver?.stop()
  await ctx?.close()
})

/** The number tokens of a JSON text (strings skipped), as written. */
function numberTokens(json: string): string[] {
  const out: string[] = []
  for (let i = 0; i < json.length; i++) {
    const c = json[i]
    if (c === '"') {
      for (i++; i < json.length && json[i] !== '"'; i++) if (json[i] === '\\') i++
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      const m = /^-?[0-9][0-9.eE+-]*/.exec(json.slice(i, i + 400))!
      out.push(m[0])
      i += m[0].length - 1
    }
  }
  return out
}
const exponents = (json: string) => numberTokens(json).filter((n) => /[eE]/.test(n))

describe('no exponent notation in any output (contract §15 §3 prices)', () => {
  test('tiny and large numbers: JSON answers, events, webhook bodies and the feed write them in plain decimals', async () => {
    const b = await seedBusiness(ctx)
    const endpoint = await createEndpoint(ctx, b.apiKey, receiver.url(`/plain-${b.id}`), ['*'])
    const location = { ...propertyBody().location, coordinates: { latitude: 1.5e-7, longitude: -2.5e-8 }, visibility: 'public' }
    const body = propertyBody({ operations: ['venta', 'alquiler'], pricing: { sale: 1e-7, rent: 5e-7 }, location, area: { total: 9.5e-7 } })
    const created = await call(ctx.app, 'POST', '/v1/properties', { key: b.apiKey, body })
    expect(created.status, created.text).toBe(201)
    const id = created.body.id
    await call(ctx.app, 'PATCH', `/v1/properties/${id}`, { key: b.apiKey, body: { pricing: { sale: MAX_PRICE } } })
    await call(ctx.app, 'PATCH', `/v1/properties/${id}`, { key: b.apiKey, body: { pricing: { sale: 3e-7 } } })
    expect((await call(ctx.app, 'POST', `/v1/properties/${id}/publish`, { key: b.apiKey })).status).toBe(200)
    const lead = (await call(ctx.app, 'POST', '/v1/leads', { key: b.apiKey, body: leadBody({ budget_max: 2e-7 }) })).body.id
    await call(ctx.app, 'PATCH', `/v1/leads/${lead}`, { key: b.apiKey, body: { budget_max: 4e-7 } })
    await relayAll(ctx.deps)

    const texts: Record<string, string> = {}
    for (const path of [
      `/v1/properties/${id}`,
      '/v1/properties',
      `/v1/properties/${id}/private`,
      `/v1/leads/${lead}`,
      '/v1/leads',
      `/v1/leads/${lead}/export`,
      '/v1/events?limit=1000',
    ]) {
      const res = await call(ctx.app, 'GET', path, { key: b.apiKey })
      expect(res.status, `${path}: ${res.text}`).toBe(200)
      texts[path] = res.text
    }
    for (const event of JSON.parse(texts['/v1/events?limit=1000']).data)
      texts[event.id] = (await call(ctx.app, 'GET', `/v1/events/${event.id}`, { key: b.apiKey })).text
    // The values are there, written plainly.
    expect(texts[`/v1/properties/${id}/private`]).toContain('"sale":0.0000003')
    expect(texts[`/v1/leads/${lead}`]).toContain('"budget_max":0.0000004')
    expect(numberTokens(texts[`/v1/properties/${id}`])).toContain('0.00000015')
    for (const [where, text] of Object.entries(texts)) expect(exponents(text), where).toEqual([])

    await runEndpoint(ctx.deps, endpoint.id)
    const delivered = receiver.at(`/plain-${b.id}`)
    expect(delivered.length).toBeGreaterThanOrEqual(6)
    for (const r of delivered) expect(exponents(r.body), r.body.slice(0, 80)).toEqual([])

    const feed = new URL((await createFeed(ctx.deps, b.id, 'kyero')).url).pathname
    const xml = await (await ctx.app.handle(new Request(`http://localhost${feed}`))).text()
    expect(xml).toContain('<latitude>0.00000015</latitude>')
    expect(xml).not.toMatch(/>[-0-9.]*[eE][-+]?[0-9]+</)
  })
})
