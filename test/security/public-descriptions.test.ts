/**
 * Stored HTML is published sanitised (contract §15 §3 `description`): the catalogue list, the
 * single listing, the `property.published` event and the Kyero feed carry `description` and
 * each `translations` description reduced to the allow-list; the private read returns what was
 * sent; search still finds the words; rows stored before are rebuilt without an operator.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Job } from 'bullmq'
import { sql } from 'drizzle-orm'
import { createFeed } from '../../shared/feeds/operations'
import { CATALOGUE_DOC_VERSION, upgradeCatalogueDocs } from '../../shared/listings/catalogue-upgrade'
import { processCatalogueReindex } from '../../worker/processors/catalogue-reindex'
import { relayAll } from '../helpers/relay'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { parseKyero } from '../helpers/kyero-rules'
import { createPublished } from '../helpers/properties'

const HOSTILE =
  '<p onclick="alert(1)">Piso <b>luminoso</b><script>alert("xss")</script></p><img src=x onerror=alert(2)>' +
  '<a href="javascript:alert(3)">truco</a> <a href="https://agencia.example/piso" target="_blank">web</a>' +
  '<svg><style><img src=x onerror=alert(4)></style></svg><div>Piscina</div><div>Garaje</div>'
const CLEAN = '<p>Piso <b>luminoso</b></p>truco <a href="https://agencia.example/piso" rel="nofollow noopener">web</a><br />Piscina<br />Garaje'
const HOSTILE_EN = '<h1 style="x">Bright</h1><iframe src="javascript:alert(5)">flat</iframe><a href="java&#x09;script:alert(6)">link</a>'
const CLEAN_EN = '<h2>Bright</h2>flatlink'

let ctx: TestContext
let biz: SeededBusiness
let id: number

beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  id = await createPublished(ctx, biz.apiKey, {
    title: 'Piso <b>con</b> vistas',
    description: HOSTILE,
    characteristics: { translations: { en: { title: 'Flat', description: HOSTILE_EN }, ca: { title: 'Pis' } } },
  })
})
afterAll(() => ctx.close())

const publicOf = async (propertyId: number) => (await call(ctx.app, 'GET', `/v1/properties/${propertyId}`, { key: biz.apiKey })).body.data

describe('public representations carry the description sanitised (contract §15)', () => {
  test('GET /properties/{id} and GET /properties', async () => {
    const single = await publicOf(id)
    expect(single.description).toBe(CLEAN)
    expect(single.specs.translations).toEqual({ en: { title: 'Flat', description: CLEAN_EN }, ca: { title: 'Pis' } })
    // The title is text, not HTML: it is published as written (escaping it is the page's job).
    expect(single.title).toBe('Piso <b>con</b> vistas')
    const list = await call(ctx.app, 'GET', '/v1/properties', { key: biz.apiKey })
    expect(list.body.data.find((p: any) => p.id === id)).toEqual(single)
    expect(list.text).not.toContain('alert(')
    expect(list.text).not.toContain('javascript')
  })

  test('the property.published event carries the same document', async () => {
    await relayAll(ctx.deps)
    const events = (await call(ctx.app, 'GET', '/v1/events?types=property.published', { key: biz.apiKey })).body.data
    const published = events.find((e: any) => e.data.object.id === id)
    expect(published.data.object.description).toBe(CLEAN)
    expect(published.data.object.specs.translations.en.description).toBe(CLEAN_EN)
  })

  test('the Kyero feed: no script text, no markup of any kind', async () => {
    const url = new URL((await createFeed(ctx.deps, biz.id, 'kyero')).url).pathname
    const xml = await (await ctx.app.handle(new Request(`http://localhost${url}`))).text()
    const listing = parseKyero(xml).properties.find((p) => Number(p.id) === id)!
    expect(listing).toBeDefined()
    expect(xml).not.toContain('alert')
    expect(xml).not.toContain('javascript')
    expect(xml).not.toContain('xss')
  })

  test('the private read returns what was sent', async () => {
    const res = await call(ctx.app, 'GET', `/v1/properties/${id}/private`, { key: biz.apiKey })
    expect(res.status, res.text).toBe(200)
    expect(res.body.data.description).toBe(HOSTILE)
    expect(res.body.data.characteristics.translations.en.description).toBe(HOSTILE_EN)
  })

  test('a PATCH of a published listing publishes the new text sanitised', async () => {
    const patched = await call(ctx.app, 'PATCH', `/v1/properties/${id}`, {
      key: biz.apiKey,
      body: { description: '<p>Nuevo<script>x()</script></p><a href="mailto:info@agencia.example" onclick="x()">correo</a>' },
    })
    expect(patched.status, patched.text).toBe(200)
    expect((await publicOf(id)).description).toBe('<p>Nuevo</p><a href="mailto:info@agencia.example" rel="nofollow noopener">correo</a>')
    await call(ctx.app, 'PATCH', `/v1/properties/${id}`, { key: biz.apiKey, body: { description: HOSTILE } })
  })

  test('search finds the words of the sanitised text, block by block', async () => {
    for (const q of ['garaje', 'piscina', 'luminoso']) {
      const res = await call(ctx.app, 'GET', `/v1/properties?q=${q}`, { key: biz.apiKey })
      expect(
        res.body.data.map((p: any) => p.id),
        q,
      ).toContain(id)
    }
  })
})

describe('rows stored before the sanitiser are rebuilt (catalogue_derivation, migration 0029)', () => {
  test('a worker finding the stored derivation behind queues a reindex of every business, once; the reindex sanitises the rows', async () => {
    const db = ctx.deps.database.db
    // A row as an earlier version stored it: the description as sent.
    await db.execute(sql`update catalogue_entries set doc = jsonb_set(doc::jsonb, '{description}', to_jsonb(${HOSTILE}::text))::json where property_id = ${id}`)
    expect((await publicOf(id)).description).toBe(HOSTILE)
    await db.execute(sql`update catalogue_derivation set version = ${CATALOGUE_DOC_VERSION - 1}`)

    const queued = await upgradeCatalogueDocs(ctx.deps)
    expect(queued).toBeGreaterThanOrEqual(1)
    // Another worker (or the next maintenance round) finds nothing behind.
    expect(await upgradeCatalogueDocs(ctx.deps)).toBeNull()
    const [{ version }] = await db.execute<{ version: number }>(sql`select version from catalogue_derivation`)
    expect(version).toBe(CATALOGUE_DOC_VERSION)

    const jobs = await ctx.deps.queues.get('catalogue-reindex').getJobs(['waiting', 'delayed', 'prioritized'])
    const ours = jobs.filter((j) => j.data.businessId === biz.id)
    expect(ours.map((j) => j.data)).toEqual([{ businessId: biz.id, afterId: 0, batchSize: 2000 }])
    const deps = { database: ctx.deps.database, queues: ctx.deps.queues }
    for (const job of ours) await processCatalogueReindex(deps, job as Job)
    expect((await publicOf(id)).description).toBe(CLEAN)
  })
})
