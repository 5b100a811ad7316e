import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql, TransactionRollbackError } from 'drizzle-orm'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createLead, uniquePhone } from '../helpers/leads'

let ctx: TestContext
let biz: SeededBusiness
const ids: number[] = []
let phone: string
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  phone = uniquePhone()
  // Five leads; two share one created_at so the id tie-break shows.
  ids.push(await createLead(ctx, biz.apiKey, { name: 'a', phone, email: 'Mixed.Case@Example.com' }))
  ids.push(await createLead(ctx, biz.apiKey, { name: 'b', type: 'propietario' }))
  ids.push(await createLead(ctx, biz.apiKey, { name: 'c' }))
  ids.push(await createLead(ctx, biz.apiKey, { name: 'd', type: 'propietario' }))
  ids.push(await createLead(ctx, biz.apiKey, { name: 'e' }))
  const db = ctx.deps.database.db
  await db.execute(sql`update contacts set created_at = '2026-01-01T00:00:00Z', updated_at = '2026-01-01T00:00:00Z' where id in (${ids[0]}, ${ids[1]})`)
  await db.execute(sql`update contacts set created_at = '2026-02-01T00:00:00Z', updated_at = '2026-03-01T12:00:00Z' where id = ${ids[2]}`)
  await db.execute(sql`update contacts set created_at = '2026-02-02T00:00:00Z', updated_at = '2026-02-02T00:00:00Z' where id in (${ids[3]}, ${ids[4]})`)
  // Another business's lead with the same phone never shows.
  const other = await seedBusiness(ctx)
  await createLead(ctx, other.apiKey, { phone })
})
afterAll(() => ctx.close())

const list = (query = '', key = biz.apiKey) => call(ctx.app, 'GET', `/v1/leads${query}`, { key })
const idsOf = (body: any) => body.data.map((l: any) => l.id)

describe('GET /leads (api-spec §4.7, contract §4)', () => {
  test('newest first, ties on id descending, with count, limit, offset and authenticated_as', async () => {
    const res = await list()
    expect(res.status, res.text).toBe(200)
    expect(idsOf(res.body)).toEqual([ids[4], ids[3], ids[2], ids[1], ids[0]])
    expect(res.body).toMatchObject({ status: 'ok', count: 5, limit: 100, offset: 0, authenticated_as: biz.name })
    expect(res.body.data[0]).toEqual(expect.objectContaining({ id: ids[4], name: 'e', type: 'demandante' }))
  })

  test('limit and offset page without repeating or skipping', async () => {
    const pages = []
    for (let offset = 0; offset < 5; offset += 2) {
      const res = await list(`?limit=2&offset=${offset}`)
      expect(res.body).toMatchObject({ count: 5, limit: 2, offset })
      pages.push(...idsOf(res.body))
    }
    expect(pages).toEqual([ids[4], ids[3], ids[2], ids[1], ids[0]])
    expect((await list('?offset=10')).body).toMatchObject({ data: [], count: 5 })
  })

  test('filters: type, phone (normalised), email (case-insensitive), updated_since, combined with AND', async () => {
    expect(idsOf((await list('?type=propietario')).body)).toEqual([ids[3], ids[1]])
    const national = phone.slice(3)
    expect(idsOf((await list(`?phone=${encodeURIComponent(national)}`)).body)).toEqual([ids[0]])
    expect(idsOf((await list(`?phone=${encodeURIComponent(phone)}`)).body)).toEqual([ids[0]])
    expect(idsOf((await list('?email=mixed.case%40EXAMPLE.com')).body)).toEqual([ids[0]])
    expect(idsOf((await list('?updated_since=2026-02-02')).body)).toEqual([ids[4], ids[3], ids[2]])
    expect(idsOf((await list('?updated_since=2026-03-01T12:00:00Z')).body)).toEqual([ids[2]])
    expect(idsOf((await list('?updated_since=2026-03-01T13:00:00%2B01:00')).body)).toEqual([ids[2]])
    expect(idsOf((await list('?updated_since=2026-03-01T12:00:01')).body)).toEqual([])
    const both = await list('?type=propietario&updated_since=2026-02-01')
    expect(idsOf(both.body)).toEqual([ids[3]])
    expect(both.body.count).toBe(1)
    expect((await list('?email=nobody%40example.com')).body).toMatchObject({ data: [], count: 0 })
  })

  test('invalid limit, offset, type, phone and updated_since are 422 naming the parameter; unknown parameters are ignored', async () => {
    const cases: [string, string][] = [
      ['?limit=0', 'limit'],
      ['?limit=1001', 'limit'],
      ['?limit=abc', 'limit'],
      ['?offset=-1', 'offset'],
      ['?limit=1.5', 'limit'],
      ['?type=cliente', 'type'],
      ['?phone=123', 'phone'],
      ['?updated_since=yesterday', 'updated_since'],
      ['?updated_since=2026-02-30', 'updated_since'],
      ['?updated_since=2026-13-01', 'updated_since'],
    ]
    for (const [query, name] of cases) {
      const res = await list(query)
      expect(res.status, `${query} ${res.text}`).toBe(422)
      expect(res.body.errors[0].loc, query).toEqual(['query', name])
    }
    expect((await list('?foo=bar&limit=1')).body.data).toHaveLength(1)
  })

  test('another business sees only its own leads', async () => {
    const other = await seedBusiness(ctx)
    const res = await list('', other.apiKey)
    expect(res.body).toMatchObject({ data: [], count: 0 })
  })

  test('the page order, phone and email filters match the indexes', async () => {
    // Plans follow statistics, so the business is given a realistic size inside a transaction
    // that is rolled back: 5,000 contacts, analysed, with scans and sorts priced out.
    const checked = ctx.deps.database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into contacts (business_id, name, phone, email)
        select ${biz.id}, 'n' || g, '+3460' || lpad(g::text, 7, '0'), 'p' || g || '@example.test' from generate_series(1, 5000) g`)
      await tx.execute(sql`analyze contacts`)
      await tx.execute(sql`set local enable_seqscan = off`)
      await tx.execute(sql`set local enable_sort = off`)
      const plan = async (q: ReturnType<typeof sql>) => (await tx.execute<{ 'QUERY PLAN': string }>(sql`explain ${q}`)).map((r) => r['QUERY PLAN']).join('\n')
      expect(await plan(sql`select * from contacts where business_id = ${biz.id} order by created_at desc nulls last, id desc nulls last limit 100`)).toContain(
        'contacts_business_created_idx',
      )
      expect(await plan(sql`select * from contacts where business_id = ${biz.id} and phone = ${phone}`)).toContain('contacts_business_phone_uq')
      expect(await plan(sql`select * from contacts where business_id = ${biz.id} and email is not null and lower(email) = lower('x@y.z')`)).toContain(
        'contacts_business_email_uq',
      )
      tx.rollback()
    })
    await expect(checked).rejects.toBeInstanceOf(TransactionRollbackError)
  })
})
