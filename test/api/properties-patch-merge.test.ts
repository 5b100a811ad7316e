/**
 * PATCH /properties/{id} merges at every depth and validates
 * the merged result (contract §3.2, §15); `null` clears at every depth, `is_featured` included;
 * `owner_id` is checked only when the PATCH sets it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import fc from 'fast-check'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createProperty, createPublished } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const patch = (id: number, body: unknown) => call(ctx.app, 'PATCH', `/v1/properties/${id}`, { key: biz.apiKey, body })
const get = async (id: number) => (await call(ctx.app, 'GET', `/v1/properties/${id}`, { key: biz.apiKey })).body.data
const locs = (res: { body: any }) => (res.body.errors ?? []).map((e: any) => e.loc.join('.'))
const stored = async (id: number) => {
  const [row] = await ctx.deps.database.db.execute<{ location: any; characteristics: any; is_featured: boolean; status: string }>(
    sql`select location, characteristics, is_featured, status from properties where id = ${id}`,
  )
  return row
}

describe('nested objects merge at every level, then the merged result is validated', () => {
  test('location.coordinates.latitude alone keeps the longitude', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    const res = await patch(id, { location: { coordinates: { latitude: 40.5 } } })
    expect(res.status, res.text).toBe(200)
    const p = await get(id)
    expect([p.lat, p.lon]).toEqual([40.5, -0.37634])
  })

  test('a partial nested object with nothing to merge into is a 422 on the missing key', async () => {
    const id = await createProperty(ctx, biz.apiKey, { location: { city: 'Soria' } })
    const res = await patch(id, { location: { coordinates: { latitude: 41.7 } } })
    expect(res.status, res.text).toBe(422)
    expect(locs(res)).toEqual(['body.location.coordinates.longitude'])
  })

  test('deeper objects merge too: translations, num_entrances, floor_breakdown', async () => {
    const id = await createPublished(ctx, biz.apiKey, {
      characteristics: {
        translations: { en: { title: 'Penthouse', description: 'Bright' } },
        num_entrances: { total: 2, car_entrances: 1 },
        floor_breakdown: { base_floor: 50 },
      },
    })
    const res = await patch(id, {
      characteristics: {
        translations: { en: { title: 'Attic' }, fr: { title: 'Attique' } },
        num_entrances: { total: 3 },
        floor_breakdown: { first_floor: 40 },
      },
    })
    expect(res.status, res.text).toBe(200)
    const { specs } = await get(id)
    expect(specs.translations).toEqual({ en: { title: 'Attic', description: 'Bright' }, fr: { title: 'Attique' } })
    expect(specs.num_entrances).toEqual({ total: 3, car_entrances: 1 })
    expect(specs.floor_breakdown).toEqual({ base_floor: 50, first_floor: 40 })
  })

  test('a nested value out of range is a 422 naming the nested field', async () => {
    const id = await createProperty(ctx, biz.apiKey)
    const res = await patch(id, { location: { coordinates: { latitude: 91 } } })
    expect(res.status, res.text).toBe(422)
    expect(locs(res)).toEqual(['body.location.coordinates.latitude'])
  })
})

describe('null clears at every depth, is_featured too', () => {
  test('is_featured: null goes back to its default false', async () => {
    const id = await createPublished(ctx, biz.apiKey, { is_featured: true })
    const res = await patch(id, { is_featured: null })
    expect(res.status, res.text).toBe(200)
    expect((await get(id)).is_featured).toBe(false)
  })

  test('characteristics: null clears them all', async () => {
    const id = await createPublished(ctx, biz.apiKey, { characteristics: { elevator: true, floor: '3' } })
    const res = await patch(id, { characteristics: null })
    expect(res.status, res.text).toBe(200)
    expect((await stored(id)).characteristics).toEqual({})
    expect((await get(id)).specs.elevator).toBeUndefined()
  })

  test('null inside nested characteristics objects clears that key only', async () => {
    const id = await createPublished(ctx, biz.apiKey, {
      characteristics: {
        translations: { en: { title: 'T', description: 'D' }, fr: { title: 'F' } },
        num_entrances: { total: 2, car_entrances: 1 },
        activities: { predefined: ['bar'], custom: ['x'] },
      },
    })
    const res = await patch(id, {
      characteristics: { translations: { en: { description: null }, fr: null }, num_entrances: { car_entrances: null }, activities: { custom: null } },
    })
    expect(res.status, res.text).toBe(200)
    const { specs } = await get(id)
    expect(specs.translations).toEqual({ en: { title: 'T' } })
    expect(specs.num_entrances).toEqual({ total: 2 })
    expect(specs.activities).toEqual({ predefined: ['bar'] })
  })

  test('location.coordinates: null removes the point', async () => {
    const id = await createPublished(ctx, biz.apiKey)
    expect((await patch(id, { location: { coordinates: null } })).status).toBe(200)
    const p = await get(id)
    expect(p.lat).toBeUndefined()
    expect((await stored(id)).location.coordinates).toBeUndefined()
  })

  test('required fields still cannot be nulled, at any depth', async () => {
    const id = await createProperty(ctx, biz.apiKey)
    for (const [body, loc] of [
      [{ title: null }, 'body.title'],
      [{ location: { city: null } }, 'body.location.city'],
      [{ area: { total: null } }, 'body.area.total'],
      [{ location: { coordinates: { latitude: null } } }, 'body.location.coordinates.latitude'],
    ] as const) {
      const res = await patch(id, body)
      expect(res.status, JSON.stringify(body)).toBe(422)
      expect(locs(res)).toContain(loc)
    }
  })

  test('property: any optional characteristic set then nulled is gone, the others kept', async () => {
    const id = await createProperty(ctx, biz.apiKey)
    const keys = ['elevator', 'floor', 'views', 'construction_year', 'luxury_property', 'num_parkings'] as const
    const value = { elevator: true, floor: '2', views: 'mar', construction_year: 1990, luxury_property: false, num_parkings: 1 }
    await fc.assert(
      fc.asyncProperty(fc.subarray([...keys], { minLength: 1 }), fc.subarray([...keys]), async (set, cleared) => {
        expect((await patch(id, { characteristics: null })).status).toBe(200)
        expect((await patch(id, { characteristics: Object.fromEntries(set.map((k) => [k, value[k]])) })).status).toBe(200)
        const res = await patch(id, { characteristics: Object.fromEntries(cleared.map((k) => [k, null])) })
        expect(res.status, res.text).toBe(200)
        const after = (await stored(id)).characteristics
        expect(Object.keys(after).sort()).toEqual(set.filter((k) => !cleared.includes(k)).sort())
      }),
      { numRuns: 30 },
    )
  })
})

describe('owner_id is re-validated only when the PATCH sets it', () => {
  const contact = async (type: string) => {
    const [row] = await ctx.deps.database.db.execute<{ id: number }>(
      sql`insert into contacts (business_id, type, name) values (${biz.id}, ${type}, 'Dueña') returning id`,
    )
    return row.id
  }

  test('a property whose owner became a demandante can still be edited', async () => {
    const owner = await contact('propietario')
    const id = await createProperty(ctx, biz.apiKey, { owner_id: owner })
    await ctx.deps.database.db.execute(sql`update contacts set type = 'demandante' where id = ${owner}`)
    const res = await patch(id, { title: 'Nuevo título' })
    expect(res.status, res.text).toBe(200)
    const [row] = await ctx.deps.database.db.execute<{ title: string; owner_id: number }>(sql`select title, owner_id from properties where id = ${id}`)
    expect(row).toEqual({ title: 'Nuevo título', owner_id: owner })
  })

  test('setting owner_id still checks it; clearing it does not', async () => {
    const buyer = await contact('demandante')
    const owner = await contact('propietario')
    const id = await createProperty(ctx, biz.apiKey, { owner_id: owner })
    const res = await patch(id, { owner_id: buyer })
    expect(res.status, res.text).toBe(422)
    expect(locs(res)).toEqual(['body.owner_id'])
    await ctx.deps.database.db.execute(sql`update contacts set type = 'demandante' where id = ${owner}`)
    // Re-sending the stored value is setting it: checked again.
    expect((await patch(id, { owner_id: owner })).status).toBe(422)
    expect((await patch(id, { owner_id: null })).status).toBe(200)
  })
})

describe('precedence and locations of the body check', () => {
  test('a key without properties:write gets 403 for an invalid body, before any 422', async () => {
    const id = await createProperty(ctx, biz.apiKey)
    const reader = await biz.key(['properties:read'])
    const invalid = { characteristics: { floor: 'x'.repeat(101) }, title: null }
    expect((await call(ctx.app, 'PATCH', `/v1/properties/${id}`, { key: reader.apiKey, body: invalid })).status).toBe(403)
    expect((await call(ctx.app, 'POST', '/v1/properties', { key: reader.apiKey, body: invalid })).status).toBe(403)
  })

  test('inside a nullable object the 422 names the innermost field and says what is wrong', async () => {
    const id = await createProperty(ctx, biz.apiKey)
    const res = await patch(id, {
      characteristics: { floor: 'x'.repeat(101), num_entrances: { total: -1 } },
      features: [{ key: 'k', label: 'L', value: 'v'.repeat(201) }],
    })
    expect(res.status, res.text).toBe(422)
    expect(locs(res).sort()).toEqual(['body.characteristics.floor', 'body.characteristics.num_entrances.total', 'body.features.0.value'])
    expect(res.body.errors.find((e: any) => e.loc.join('.') === 'body.characteristics.floor').msg).toMatch(/100/)
  })
})
