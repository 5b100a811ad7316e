import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { INVALID_PHONE_MESSAGE } from '../../shared/leads/phones'
import { createLogger } from '../../shared/platform/logger'
import { startWorkers, type RunningWorkers } from '../../worker/runtime'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { contactsOf, ingestBody, uniquePhone } from '../helpers/leads'

let ctx: TestContext
let biz: SeededBusiness
let workers: RunningWorkers
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  // A real lead-ingest worker on this file's queue prefix.
  workers = await startWorkers(ctx.config, createLogger('silent'), ['lead-ingest'])
})
afterAll(async () => {
  await workers.close()
  await ctx.close()
})

const ingest = (body: unknown, key = biz.apiKey) => call(ctx.app, 'POST', '/v1/leads/ingest', { key, body })
const leadByPhone = async (businessId: number, phone: string) => (await contactsOf(ctx, businessId)).find((r) => r.phone === phone)
const persisted = (businessId: number, phone: string) => eventually(() => leadByPhone(businessId, phone), { what: `lead ${phone}` })

describe('POST /leads/ingest (api-spec §4.11, contract §4.1)', () => {
  test('200 {status, authenticated_as} without a lead id; the lead is created with the rule-2 defaults', async () => {
    const phone = uniquePhone()
    const body = ingestBody({
      contact: { name: 'Lucía Martín', phone: phone.slice(3) },
      search: {
        budget: '800-1100',
        entryDate: '2026-12-01',
        people: '2',
        area: 'Ruzafa',
        habs: '2',
        pets: 'no',
        workSituation: 'Indefinido',
        location: { name: 'Valencia', geometry: { type: 'circle', center: { lat: 39.47, lng: -0.37 }, radius: 2000 } },
        freeText: 'Busco piso.',
      },
    })
    const res = await ingest(body)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ status: 'ok', authenticated_as: biz.name })
    const row = await persisted(biz.id, phone)
    expect(row).toMatchObject({
      type: 'demandante',
      name: 'Lucía Martín',
      email: null,
      phone,
      source: 'landing-alquiler',
      operation: 'alquiler',
      property_types: ['apartamento', 'casa'],
      rating: 3,
      urgency: 'alta-urgencia',
      budget_max: 1100,
      min_bedrooms: 2,
      search_location: body.search.location,
    })
    expect(row.notes).toBe(
      'Source page: https://example.com/alquiler-valencia\nEntry date: 2026-12-01\nPeople: 2\nArea: Ruzafa\nBedrooms (habs): 2\nPets: no\nWork situation: Indefinido\nMessage: Busco piso.',
    )
    // The lead reads back through the API like any other.
    const got = await call(ctx.app, 'GET', `/v1/leads/${row.id}`, { key: biz.apiKey })
    expect(got.body.data).toMatchObject({
      phone,
      budget_max: 1100,
      min_bedrooms: 2,
      rating: 3,
      urgency: 'alta-urgencia',
      property_types: ['apartamento', 'casa'],
    })
  })

  test('a single budget, no budget, and habs that is not a whole number', async () => {
    const [p1, p2] = [uniquePhone(), uniquePhone()]
    expect((await ingest(ingestBody({ contact: { phone: p1 }, search: { budget: '950', habs: 'dos' } }))).status).toBe(200)
    const b2 = ingestBody({ contact: { phone: p2 } })
    b2.search = { area: 'Centro' }
    expect((await ingest(b2)).status).toBe(200)
    const r1 = await persisted(biz.id, p1)
    expect(r1).toMatchObject({ budget_max: 950, min_bedrooms: null })
    expect(r1.notes).toContain('Bedrooms (habs): dos')
    const r2 = await persisted(biz.id, p2)
    expect(r2).toMatchObject({
      budget_max: null,
      min_bedrooms: null,
      search_location: null,
      notes: 'Source page: https://example.com/alquiler-valencia\nArea: Centro',
    })
  })

  test('phone priority: areaCode+phoneNumber, then phoneE164, then phone, then phoneRaw', async () => {
    const b = await seedBusiness(ctx)
    const [a, e, p, r] = [uniquePhone(), uniquePhone(), uniquePhone(), uniquePhone()]
    await ingest(ingestBody({ contact: { areaCode: '+34', phoneNumber: a.slice(3), phoneE164: e, phone: p, phoneRaw: r } }), b.apiKey)
    await ingest(ingestBody({ contact: { areaCode: '+34', phoneNumber: null, phoneE164: e, phone: p, phoneRaw: r } }), b.apiKey)
    await ingest(ingestBody({ contact: { phoneE164: 'nope', phone: p, phoneRaw: r } }), b.apiKey)
    await ingest(ingestBody({ contact: { phone: 'no', phoneRaw: r.replace('+34', '0034 ') } }), b.apiKey)
    await eventually(async () => (await contactsOf(ctx, b.id)).length === 4)
    expect((await contactsOf(ctx, b.id)).map((l) => l.phone).sort()).toEqual([a, e, p, r].sort())
  })

  test('no valid phone: 422 whose detail is exactly the documented message, and nothing is created', async () => {
    const b = await seedBusiness(ctx)
    const res = await ingest(ingestBody({ contact: { phone: '12345', phoneRaw: 'abc', phoneE164: null, areaCode: '+34', phoneNumber: '1' } }), b.apiKey)
    expect(res.status, res.text).toBe(422)
    expect(res.headers.get('content-type')).toContain('application/problem+json')
    expect(res.body.detail).toBe(INVALID_PHONE_MESSAGE)
    expect(res.body.errors).toEqual([{ loc: ['body', 'contact', 'phone'], msg: INVALID_PHONE_MESSAGE, type: 'phone_invalid' }])
    expect(await contactsOf(ctx, b.id)).toHaveLength(0)
  })

  test('a malformed budget is the documented 500 problem, and nothing is created', async () => {
    const b = await seedBusiness(ctx)
    for (const budget of ['1.200', '900 €', 'mil euros', '800,50']) {
      const res = await ingest(ingestBody({ search: { budget } }), b.apiKey)
      expect(res.status, res.text).toBe(500)
      expect(res.headers.get('content-type')).toContain('application/problem+json')
      expect(res.body).toMatchObject({ status: 500, code: 'invalid_budget', detail: expect.stringContaining(`Invalid budget ${JSON.stringify(budget)}`) })
    }
    expect(await contactsOf(ctx, b.id)).toHaveLength(0)
  })

  test('required fields and types are checked by the schema (422 naming the field)', async () => {
    const full = ingestBody()
    const cases: [Record<string, any>, (string | number)[]][] = []
    for (const k of ['id', 'createdAt', 'source', 'sourcePage', 'contact', 'search']) {
      const { [k]: _, ...rest } = full
      cases.push([rest, ['body', k]])
    }
    cases.push([{ ...full, contact: { phone: uniquePhone() } }, ['body', 'contact', 'name']])
    cases.push([{ ...full, contact: { name: 'x' } }, ['body', 'contact', 'phone']])
    cases.push([{ ...full, search: { budget: 900 } }, ['body', 'search', 'budget']])
    cases.push([{ ...full, search: { location: 'Valencia' } }, ['body', 'search', 'location']])
    cases.push([{ ...full, extra: 1 }, ['body', 'extra']])
    for (const [body, loc] of cases) {
      const res = await ingest(body)
      expect(res.status, `${loc.join('.')} ${res.text}`).toBe(422)
      expect(
        res.body.errors.map((e: any) => e.loc),
        loc.join('.'),
      ).toContainEqual(loc)
    }
  })

  test('null optional contact and search fields are accepted as missing', async () => {
    const phone = uniquePhone()
    const res = await ingest(
      ingestBody({
        contact: { phone, phoneRaw: null, areaCode: null, phoneNumber: null, phoneE164: null },
        search: { budget: null, habs: null, location: null, freeText: null },
      }),
    )
    expect(res.status, res.text).toBe(200)
    expect(await persisted(biz.id, phone)).toMatchObject({ budget_max: null, min_bedrooms: null, search_location: null })
  })

  test('an existing lead with the same phone is neither duplicated nor updated; the answer is still 200', async () => {
    const b = await seedBusiness(ctx)
    const phone = uniquePhone()
    const created = await call(ctx.app, 'POST', '/v1/leads', { key: b.apiKey, body: { name: 'Original', phone, notes: 'mine' } })
    expect(created.status).toBe(201)
    const before = (await contactsOf(ctx, b.id))[0]
    const res = await ingest(ingestBody({ contact: { name: 'Otro', phone } }), b.apiKey)
    expect(res.status).toBe(200)
    // A later lead proves the batch carrying the duplicate has been processed.
    const marker = uniquePhone()
    await ingest(ingestBody({ contact: { phone: marker } }), b.apiKey)
    await persisted(b.id, marker)
    await eventually(
      async () => {
        const counts = await ctx.deps.queues.get('lead-ingest').getJobCounts('waiting', 'active', 'delayed', 'prioritized')
        return Object.values(counts).every((n) => n === 0)
      },
      { what: 'an empty lead-ingest queue' },
    )
    const rows = await contactsOf(ctx, b.id)
    expect(rows.filter((r) => r.phone === phone)).toEqual([before])
  })

  test('scope leads:ingest is required; leads:write alone is 403', async () => {
    const writer = await biz.key(['leads:write', 'leads:read'])
    const res = await ingest(ingestBody(), writer.apiKey)
    expect(res.status, res.text).toBe(403)
    const ingester = await biz.key(['leads:ingest'])
    expect((await ingest(ingestBody(), ingester.apiKey)).status).toBe(200)
  })

  test('tenancy: the same phone in two businesses makes two leads', async () => {
    const [b1, b2] = [await seedBusiness(ctx), await seedBusiness(ctx)]
    const phone = uniquePhone()
    await Promise.all([ingest(ingestBody({ contact: { phone } }), b1.apiKey), ingest(ingestBody({ contact: { phone } }), b2.apiKey)])
    await persisted(b1.id, phone)
    await persisted(b2.id, phone)
  })
})
