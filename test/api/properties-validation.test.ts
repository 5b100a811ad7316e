import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createProperty, createPublished, propertyBody } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const post = (body: unknown) => call(ctx.app, 'POST', '/v1/properties', { key: biz.apiKey, body })
const locs = (res: { body: any }) => (res.body.errors ?? []).map((e: any) => e.loc.join('.'))

describe('POST /properties validation (contract §3.1)', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['missing title', { title: undefined }, 'body.title'],
    ['empty title', { title: '' }, 'body.title'],
    ['title > 300', { title: 'x'.repeat(301) }, 'body.title'],
    ['description > 50000', { description: 'x'.repeat(50001) }, 'body.description'],
    ['no operations', { operations: [] }, 'body.operations'],
    ['unknown operation', { operations: ['permuta'] }, 'body.operations.0'],
    ['repeated operation', { operations: ['venta', 'venta'] }, 'body.operations'],
    ['unknown type', { type: 'castillo' }, 'body.type'],
    ['unknown subtype', { subtype: 'castillo' }, 'body.subtype'],
    ['subtype of another type', { subtype: 'local_comercial' }, 'body.subtype'],
    ['negative price', { pricing: { sale: -1 } }, 'body.pricing.sale'],
    ['price as string', { pricing: { sale: '100' } }, 'body.pricing.sale'],
    ['missing rent for alquiler', { operations: ['venta', 'alquiler'] }, 'body.pricing.rent'],
    ['missing transfer for traspaso', { operations: ['traspaso'], pricing: { sale: 1 } }, 'body.pricing.transfer'],
    ['missing city', { location: { address: 'x' } }, 'body.location.city'],
    ['latitude out of range', { location: { city: 'x', coordinates: { latitude: 91, longitude: 0 } } }, 'body.location.coordinates.latitude'],
    ['longitude out of range', { location: { city: 'x', coordinates: { latitude: 0, longitude: -181 } } }, 'body.location.coordinates.longitude'],
    ['bad visibility', { location: { city: 'x', visibility: 'secret' } }, 'body.location.visibility'],
    ['missing area.total', { area: { usable: 1 } }, 'body.area.total'],
    ['negative area', { area: { total: -5 } }, 'body.area.total'],
    ['bedrooms > 1000', { bedrooms: 1001 }, 'body.bedrooms'],
    ['bathrooms < 0', { bathrooms: -1 }, 'body.bathrooms'],
    ['bedrooms not integer', { bedrooms: 1.5 }, 'body.bedrooms'],
    ['status vendida on create', { status: 'vendida' }, 'body.status'],
    ['owner_id 0', { owner_id: 0 }, 'body.owner_id'],
    ['unknown top-level field', { colour: 'red' }, 'body.colour'],
    ['unknown nested field', { pricing: { sale: 1, salee: 2 } }, 'body.pricing.salee'],
    ['derived characteristic', { characteristics: { price_calc: { price_alq: 1 } } }, 'body.characteristics.price_calc'],
    ['energy value out of range', { characteristics: { energy_consumption_value: 1000 } }, 'body.characteristics.energy_consumption_value'],
    ['house_floors 0', { characteristics: { house_floors: 0 } }, 'body.characteristics.house_floors'],
    ['elevator not boolean', { characteristics: { elevator: 'yes' } }, 'body.characteristics.elevator'],
    ['feature key too long', { features: [{ key: 'k'.repeat(101), label: 'L', value: 1 }] }, 'body.features.0.key'],
    ['feature without value', { features: [{ key: 'k', label: 'L' }] }, 'body.features.0.value'],
    [
      'duplicate feature keys',
      {
        features: [
          { key: 'k', label: 'L', value: 1 },
          { key: 'k', label: 'M', value: 2 },
        ],
      },
      'body.features.1.key',
    ],
    ['too many features', { features: Array.from({ length: 201 }, (_, i) => ({ key: `k${i}`, label: 'L', value: i })) }, 'body.features'],
  ]
  for (const [name, override, loc] of cases) {
    test(`${name} → 422 at ${loc}`, async () => {
      const body = propertyBody(override)
      for (const [k, v] of Object.entries(override)) if (v === undefined) delete body[k]
      const res = await post(body)
      expect(res.status, res.text).toBe(422)
      expect(res.headers.get('content-type')).toContain('application/problem+json')
      expect(locs(res), res.text).toContain(loc)
    })
  }

  test('owner_id must be a propietario contact of the same business', async () => {
    const other = await seedBusiness(ctx)
    const [mine] = await ctx.deps.database.db.execute<{ id: number }>(
      sql`insert into contacts (business_id, type, name) values (${biz.id}, 'propietario', 'Dueña') returning id`,
    )
    const [buyer] = await ctx.deps.database.db.execute<{ id: number }>(
      sql`insert into contacts (business_id, type, name) values (${biz.id}, 'demandante', 'Comprador') returning id`,
    )
    const [foreign] = await ctx.deps.database.db.execute<{ id: number }>(
      sql`insert into contacts (business_id, type, name) values (${other.id}, 'propietario', 'Ajeno') returning id`,
    )
    for (const id of [buyer.id, foreign.id, 999999999]) {
      const res = await post(propertyBody({ owner_id: id }))
      expect(res.status, res.text).toBe(422)
      expect(locs(res)).toEqual(['body.owner_id'])
    }
    expect((await post(propertyBody({ owner_id: mine.id }))).status).toBe(201)
  })

  test('a minimal body gets the defaults', async () => {
    const id = await createPublished(ctx, biz.apiKey, {
      subtype: undefined,
      description: undefined,
      bedrooms: undefined,
      bathrooms: undefined,
      location: { city: 'Soria' },
      area: { total: 10 },
    })
    const res = await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: biz.apiKey })
    expect(res.body.data).toMatchObject({
      subtype: 'Sin Especificar',
      description: '',
      bedrooms: 0,
      bathrooms: 0,
      status: 'disponible',
      is_featured: false,
      country: 'España',
      specs: { address_privacy: 'approximate' },
    })
  })

  test('malformed JSON and a non-JSON content type are 422', async () => {
    expect((await call(ctx.app, 'POST', '/v1/properties', { key: biz.apiKey, body: '{"title":' })).status).toBe(422)
    expect((await call(ctx.app, 'POST', '/v1/properties', { key: biz.apiKey, body: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(422)
  })
})

describe('PATCH /properties/{id} (contract §3.2)', () => {
  const patch = (id: number, body: unknown) => call(ctx.app, 'PATCH', `/v1/properties/${id}`, { key: biz.apiKey, body })
  const get = async (id: number) => (await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: biz.apiKey })).body.data

  test('nested objects merge: pricing.rent alone keeps pricing.sale', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    expect((await patch(id, { operations: ['venta', 'alquiler'], pricing: { rent: 900 } })).status).toBe(200)
    const p = await get(id)
    expect(p.price).toBe(250000)
    expect(p.specs.price_calc).toEqual({ price_alq: 900 })
  })

  test('location merges key by key', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    expect((await patch(id, { location: { visibility: 'hidden' } })).status).toBe(200)
    const p = await get(id)
    expect(p.city).toBe('Valencia')
    expect(p.address).toBeUndefined()
    expect(p.specs.address_privacy).toBe('hidden')
  })

  test('null clears optional fields', async () => {
    const id = await createPublished(ctx, biz.apiKey, { characteristics: { elevator: true, floor: '3' } })
    const res = await patch(id, { subtype: null, characteristics: { floor: null }, location: { postal_code: null } })
    expect(res.status, res.text).toBe(200)
    const p = await get(id)
    expect(p.subtype).toBe('Sin Especificar')
    expect(p.specs.elevator).toBe(true)
    expect(p.specs.floor).toBeUndefined()
    expect(p.postal_code).toBeUndefined()
  })

  test('the merged result is validated: removing the price of a listed operation is 422', async () => {
    const id = await createProperty(ctx, biz.apiKey, { operations: ['venta', 'alquiler'], pricing: { sale: 1, rent: 2 } })
    const res = await patch(id, { pricing: { rent: null } })
    expect(res.status, res.text).toBe(422)
    expect(locs(res)).toEqual(['body.pricing.rent'])
    const noCity = await patch(id, { location: { city: null } })
    expect(noCity.status, noCity.text).toBe(422)
    const changedType = await patch(id, { type: 'local' })
    expect(changedType.status, changedType.text).toBe(422)
    expect(locs(changedType)).toEqual(['body.subtype'])
  })

  test('required fields cannot be nulled; unknown fields are refused', async () => {
    const id = await createProperty(ctx, biz.apiKey)
    expect((await patch(id, { title: null })).status).toBe(422)
    const unknown = await patch(id, { titel: 'x' })
    expect(unknown.status).toBe(422)
    expect(locs(unknown)).toEqual(['body.titel'])
  })

  test('status can become vendida, alquilada or traspasada; other values are 422', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    for (const status of ['vendida', 'alquilada', 'traspasada']) {
      expect((await patch(id, { status })).status).toBe(200)
      expect((await get(id)).status).toBe(status)
    }
    expect((await patch(id, { status: 'borrada' })).status).toBe(422)
  })

  test('works on drafts, keeps them drafts, and preserves private metadata', async () => {
    const id = await createProperty(ctx, biz.apiKey)
    await ctx.deps.database.db.execute(sql`update properties set metadata = '{"crm":"x"}' where id = ${id}`)
    expect((await patch(id, { title: 'Otro' })).status).toBe(200)
    expect((await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: biz.apiKey })).status).toBe(404)
    const [row] = await ctx.deps.database.db.execute<{ title: string; metadata: unknown }>(sql`select title, metadata from properties where id = ${id}`)
    expect(row).toEqual({ title: 'Otro', metadata: { crm: 'x' } })
  })

  test('missing ids and bad ids', async () => {
    expect((await patch(999999999, { title: 'x' })).status).toBe(404)
    for (const res of [
      await patch(0, { title: 'x' }),
      await call(ctx.app, 'GET', '/v1/properties/abc', { key: biz.apiKey }),
      await call(ctx.app, 'GET', '/v1/properties/-3', { key: biz.apiKey }),
    ]) {
      expect(res.status, res.text).toBe(422)
      expect(res.body.errors[0].loc, res.text).toEqual(['path', 'property_id'])
    }
  })
})
