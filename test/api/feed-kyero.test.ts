/**
 * The Kyero portal feed (contract §12) end to end: feeds made by the operations the CLI calls,
 * `GET /feeds/{token}/kyero.xml` through the app, checked against Kyero's v3 rules
 * (test/helpers/kyero-rules.ts), the public privacy rules, hostile text, and HTTP caching.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { createFeed, revokeFeedById } from '../../shared/feeds/operations'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { kyeroViolations, parseKyero } from '../helpers/kyero-rules'
import { createProperty, createPublished, propertyBody } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
let feedUrl: string
const ids: Record<string, number> = {}

const HOSTILE = 'Vistas <al> mar & "sol" \'bonito\' \u0001\u0008\u000B\uFFFE 🌊🏖️ مرحبا بكم עברית'

beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  ids.public = await createPublished(ctx, biz.apiKey, {
    title: HOSTILE,
    description: '<p>Primera</p><p>Segunda &amp; línea</p>',
    characteristics: {
      energy_certificate: 'c',
      emissions: 'B',
      elevator: true,
      translations: { en: { title: 'Penthouse', description: '<p>Sea views &amp; a <b>pool</b></p>' } },
    },
    features: [
      { key: 'piscina', label: 'Piscina', value: true },
      { key: 'garaje', label: 'Garaje', value: false },
      { key: 'plazas', label: 'Plazas', value: 2 },
      { key: 'vistas', label: HOSTILE, value: true },
    ],
  })
  ids.approximate = await createPublished(ctx, biz.apiKey, {
    location: { ...propertyBody().location, visibility: 'approximate' },
    operations: ['alquiler'],
    pricing: { rent: 1150.5 },
  })
  ids.hidden = await createPublished(ctx, biz.apiKey, {
    location: { city: 'Madrid', postal_code: '28013', coordinates: { latitude: 40.41, longitude: -3.7 }, visibility: 'hidden' },
  })
  ids.transferOnly = await createPublished(ctx, biz.apiKey, {
    type: 'local',
    subtype: 'local_comercial',
    operations: ['traspaso'],
    pricing: { transfer: 40000 },
  })
  ids.draft = await createProperty(ctx, biz.apiKey)
  feedUrl = new URL((await createFeed(ctx.deps, biz.id, 'kyero')).url).pathname
})
afterAll(() => ctx.close())

const get = (path: string, headers: Record<string, string> = {}) => ctx.app.handle(new Request(`http://localhost${path}`, { headers }))

describe('GET /feeds/{token}/kyero.xml', () => {
  let xml: string
  let res: Response
  beforeAll(async () => {
    res = await get(feedUrl)
    xml = await res.text()
  })

  test('follows Kyero v3 rules and is well-formed whatever the listings hold', () => {
    expect(res.status, xml).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/xml; charset=utf-8')
    expect(() => parseKyero(xml)).not.toThrow()
    expect(kyeroViolations(xml)).toEqual([])
  })

  test('every published sale or rental, no draft, no transfer-only listing', () => {
    const listed = parseKyero(xml).properties.map((p) => Number(p.id))
    expect(listed.sort()).toEqual([ids.public, ids.approximate, ids.hidden].sort())
  })

  test('privacy as in the public representation: exact, rounded, none', () => {
    const byId = new Map(parseKyero(xml).properties.map((p) => [Number(p.id), p]))
    expect(byId.get(ids.public)!.location).toEqual({ latitude: '39.46987', longitude: '-0.37634' })
    expect(byId.get(ids.approximate)!.location).toEqual({ latitude: '39.47', longitude: '-0.38' })
    expect(byId.get(ids.hidden)!.location).toBeUndefined()
    expect(xml).not.toContain('28013')
    expect(xml).not.toContain('Colón 12')
  })

  test('prices by operation, type, rooms, energy, descriptions per language, features', () => {
    const byId = new Map(parseKyero(xml).properties.map((p) => [Number(p.id), p]))
    const sale = byId.get(ids.public)!
    expect([sale.price, sale.price_freq, sale.currency, sale.type]).toEqual(['250000', 'sale', 'EUR', 'Penthouse'])
    expect([sale.beds, sale.baths]).toEqual(['3', '2'])
    expect(sale.energy_rating).toEqual({ consumption: 'C', emissions: 'B' })
    expect(sale.desc.en).toBe('Sea views & a pool')
    expect(sale.desc.es).toContain('Segunda & línea')
    expect(sale.features.feature.slice(0, 2)).toEqual(['Piscina', 'Plazas: 2'])
    expect(sale.features.feature.at(-1)).toBe('Ascensor')
    const rent = byId.get(ids.approximate)!
    expect([rent.price, rent.price_freq]).toEqual(['1151', 'month'])
    expect(byId.get(ids.hidden)!.province).toBe('Madrid')
  })

  test('hostile text is escaped, forbidden characters dropped, the rest kept', () => {
    expect(xml).toContain('<feature>Vistas &lt;al&gt; mar &amp; &quot;sol&quot; &apos;bonito&apos;  🌊🏖️ مرحبا بكم עברית</feature>')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters the listing held must be gone
    expect(xml).not.toMatch(/[\u0001\u0008\u000B\uFFFE]/)
  })

  test('cacheable, with validators; 304 on If-None-Match and If-Modified-Since', async () => {
    expect(res.headers.get('cache-control')).toBe('public, max-age=300')
    expect(res.headers.get('x-request-id')).toBeTruthy()
    const etag = res.headers.get('etag')!
    const lastModified = res.headers.get('last-modified')!
    expect(etag).toMatch(/^"kyero-\d+-\d+"$/)
    expect((await get(feedUrl, { 'if-none-match': etag })).status).toBe(304)
    expect((await get(feedUrl, { 'if-modified-since': lastModified })).status).toBe(304)
    expect((await get(feedUrl, { 'if-none-match': '"other"' })).status).toBe(200)
  })

  test('a change moves the ETag and that listing’s <date>; the same version gives the same bytes', async () => {
    const again = await get(feedUrl)
    expect(await again.text()).toBe(xml)
    const dateOf = (text: string, id: number) => parseKyero(text).properties.find((p) => Number(p.id) === id)!.date
    // <date> has a resolution of one second: the listing's last change is moved a minute back,
    // so the edit below falls in a later second however fast it follows.
    await ctx.deps.database.db.execute(sql`update catalogue_entries set changed_at = changed_at - interval '1 minute' where property_id = ${ids.hidden}`)
    const before = await (await get(feedUrl)).text()
    expect((await call(ctx.app, 'PATCH', `/v1/properties/${ids.hidden}`, { key: biz.apiKey, body: { title: 'Piso renovado' } })).status).toBe(200)
    const changed = await get(feedUrl)
    const text = await changed.text()
    expect(changed.headers.get('etag')).not.toBe(res.headers.get('etag'))
    expect(dateOf(text, ids.hidden)).not.toBe(dateOf(before, ids.hidden))
    expect(dateOf(text, ids.public)).toBe(dateOf(xml, ids.public))
  })

  test('unknown, malformed and revoked tokens are 404 problem+json', async () => {
    expect((await get('/feeds/not-a-token/kyero.xml')).status).toBe(404)
    expect((await get(`/feeds/${'A'.repeat(43)}/kyero.xml`)).status).toBe(404)
    const other = await createFeed(ctx.deps, biz.id, 'kyero')
    const path = new URL(other.url).pathname
    expect((await get(path)).status).toBe(200)
    await revokeFeedById(ctx.deps, other.id)
    const revoked = await get(path)
    expect(revoked.status).toBe(404)
    expect(revoked.headers.get('content-type')).toStartWith('application/problem+json')
  })
})
