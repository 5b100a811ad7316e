/**
 * Prices and budgets (contract §15 §3 prices): `pricing.sale/rent/transfer` and `budget_max`
 * (POST/PATCH /leads, an inquiry's `lead.budget_max`) are at most 10,000,000,000, else a 422 on
 * the field, and the bound is the OpenAPI `maximum`; a rental-ingest budget over it is malformed
 * (the documented 500). plain-output.test.ts: no output in exponent notation.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { parseBudgetMax } from '../../shared/leads/budget'
import { MAX_PRICE } from '../../shared/platform/schemas'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { ingestBody, leadBody } from '../helpers/leads'
import { propertyBody } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

describe('the bound (contract §15 §3 prices)', () => {
  test('pricing.sale, rent and transfer: at most 10,000,000,000, else a 422 naming the field', async () => {
    expect(MAX_PRICE).toBe(10_000_000_000)
    const ok = await call(ctx.app, 'POST', '/v1/properties', {
      key: biz.apiKey,
      body: propertyBody({ operations: ['venta', 'alquiler', 'traspaso'], pricing: { sale: MAX_PRICE, rent: MAX_PRICE, transfer: MAX_PRICE } }),
    })
    expect(ok.status, ok.text).toBe(201)
    for (const field of ['sale', 'rent', 'transfer']) {
      for (const value of [MAX_PRICE + 1, 1e308, 1e21]) {
        const pricing = { sale: 1, rent: 1, transfer: 1, [field]: value }
        const res = await call(ctx.app, 'POST', '/v1/properties', {
          key: biz.apiKey,
          body: propertyBody({ operations: ['venta', 'alquiler', 'traspaso'], pricing }),
        })
        expect(res.status, `${field} ${value}: ${res.text}`).toBe(422)
        expect(res.body.errors.map((e: any) => e.loc)).toContainEqual(['body', 'pricing', field])
      }
      const patched = await call(ctx.app, 'PATCH', `/v1/properties/${ok.body.id}`, { key: biz.apiKey, body: { pricing: { [field]: 1e11 } } })
      expect(patched.status, patched.text).toBe(422)
      expect(patched.body.errors[0].loc).toEqual(['body', 'pricing', field])
    }
  })

  test("budget_max: POST and PATCH /leads, an inquiry's lead.budget_max", async () => {
    expect((await call(ctx.app, 'POST', '/v1/leads', { key: biz.apiKey, body: leadBody({ budget_max: MAX_PRICE }) })).status).toBe(201)
    const created = await call(ctx.app, 'POST', '/v1/leads', { key: biz.apiKey, body: leadBody({ budget_max: MAX_PRICE + 1 }) })
    expect(created.status, created.text).toBe(422)
    expect(created.body.errors[0].loc).toEqual(['body', 'budget_max'])
    const id = (await call(ctx.app, 'POST', '/v1/leads', { key: biz.apiKey, body: leadBody() })).body.id
    const patched = await call(ctx.app, 'PATCH', `/v1/leads/${id}`, { key: biz.apiKey, body: { budget_max: 1e308 } })
    expect(patched.status, patched.text).toBe(422)
    expect(patched.body.errors[0].loc).toEqual(['body', 'budget_max'])
    const inquiry = await call(ctx.app, 'POST', '/v1/leads/inquiries', {
      key: biz.apiKey,
      body: { contact: { name: 'Ana', phone: leadBody().phone }, message: 'Hola', lead: { budget_max: 1e21 } },
    })
    expect(inquiry.status, inquiry.text).toBe(422)
    expect(inquiry.body.errors[0].loc).toEqual(['body', 'lead', 'budget_max'])
  })

  test('a rental-ingest budget over the bound is malformed: the documented 500', async () => {
    expect(parseBudgetMax('10000000000')).toBe(MAX_PRICE)
    expect(parseBudgetMax('900-10000000000')).toBe(MAX_PRICE)
    expect(() => parseBudgetMax('10000000001')).toThrow('Invalid budget')
    expect(() => parseBudgetMax('900-99999999999')).toThrow('Invalid budget')
    const res = await call(ctx.app, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody({ search: { budget: '800-99999999999' } }) })
    expect(res.status, res.text).toBe(500)
    expect(res.body.code).toBe('invalid_budget')
    expect((await call(ctx.app, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody({ search: { budget: '800-10000000000' } }) })).status).toBe(200)
  })

  test('the OpenAPI document states the bound as maximum', async () => {
    const schemas = JSON.parse((await call(ctx.app, 'GET', '/openapi.json')).text).components.schemas
    for (const field of ['sale', 'rent', 'transfer']) expect(schemas.PropertyPricing.properties[field].maximum, field).toBe(MAX_PRICE)
    const budget = (s: any) => JSON.stringify(s.properties.budget_max)
    for (const name of ['LeadInput', 'LeadUpdateInput', 'InquiryLead']) expect(budget(schemas[name]), name).toContain(`"maximum":${MAX_PRICE}`)
  })
})
