/**
 * Form posts without JavaScript (contract §16.3) and the honeypot (§16.4): form bodies on both
 * paths read by the JSON schema, errors naming the dotted field, the key in `api_key`
 * (publishable only), `_redirect` and its 303s, the body rules of §6, and `_gotcha`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { LANDING, form, formHeaders, ingestBody, inquiryBody, nextPhone, publishableKey, stored } from '../helpers/forms'

let ctx: TestContext
let biz: SeededBusiness
let pub: { apiKey: string; keyId: string }

beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  pub = await publishableKey(ctx, biz.id)
})
afterAll(() => ctx.close())

const post = (path: string, fields: Record<string, string | string[]>, headers: Record<string, string> = formHeaders()) =>
  call(ctx.app, 'POST', path, { body: form(fields), headers })
const leadByEmail = async (email: string) => (await call(ctx.app, 'GET', `/v1/leads?email=${encodeURIComponent(email)}`, { key: biz.apiKey })).body.data[0]

describe('form bodies on both paths, read by the same schema', () => {
  test('an inquiry form: dotted names, numbers, booleans and a repeated name become the JSON body', async () => {
    const email = `form.${Date.now()}@example.com`
    const res = await post('/v1/leads/inquiries', {
      api_key: pub.apiKey,
      'contact.name': 'Lucía Martín',
      'contact.email': email,
      'contact.phone': '',
      message: 'Me interesa el ático',
      'lead.rating': '4',
      'lead.budget_max': '1100',
      'lead.min_bedrooms': '2',
      'lead.property_types': ['apartamento', 'casa'],
      'lead.operation': 'alquiler',
      outreach: 'false',
      source_page: `${LANDING}/atico`,
    })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ status: 'ok', lead_created: true, outreach: 'skipped', authenticated_as: biz.name })
    expect(res.headers.get('access-control-allow-origin')).toBe(LANDING)
    const lead = await leadByEmail(email)
    expect(lead).toMatchObject({
      name: 'Lucía Martín',
      rating: 4,
      budget_max: 1100,
      min_bedrooms: 2,
      property_types: ['apartamento', 'casa'],
      operation: 'alquiler',
      phone: null,
    })
  })

  test('a rental-ingest form is queued like its JSON twin', async () => {
    const before = ctx.deps.ingest.stats.leads
    const res = await post('/v1/leads/ingest', {
      api_key: pub.apiKey,
      id: 'f1',
      createdAt: '2026-11-01T10:00:00Z',
      source: 'landing',
      sourcePage: `${LANDING}/alquiler`,
      'contact.name': 'Ana',
      'contact.phone': nextPhone(),
      'search.budget': '700-900',
      'search.habs': '2',
      'search.location.name': 'Valencia',
      'search.freeText': '',
    })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ status: 'ok', authenticated_as: biz.name })
    expect(ctx.deps.ingest.stats.leads).toBe(before + 1)
  })

  test('errors name the dotted field as the form spelt it', async () => {
    const phone = await post('/v1/leads/ingest', {
      api_key: pub.apiKey,
      id: 'f',
      createdAt: 'x',
      source: 's',
      sourcePage: 'p',
      'contact.name': 'Ana',
      'contact.phone': 'no es un teléfono',
      'search.habs': '2',
    })
    expect(phone.status, phone.text).toBe(422)
    expect(phone.body.errors[0]).toMatchObject({ loc: ['body', 'contact.phone'], type: 'phone_invalid' })
    const typed = await post('/v1/leads/inquiries', {
      api_key: pub.apiKey,
      'contact.name': 'Ana',
      'contact.email': 'a@example.com',
      message: 'x',
      'lead.rating': 'cuatro',
      'lead.property_types': ['casa', 'castillo'],
      'contact.nick': 'an',
    })
    expect(typed.status, typed.text).toBe(422)
    const locs = typed.body.errors.map((e: { loc: unknown[] }) => e.loc)
    expect(locs).toContainEqual(['body', 'lead.rating'])
    expect(locs).toContainEqual(['body', 'lead.property_types', 1])
    expect(locs).toContainEqual(['body', 'contact.nick'])
    const missing = await post('/v1/leads/inquiries', { api_key: pub.apiKey, 'contact.name': 'Ana', message: 'x' })
    expect(missing.status).toBe(422)
    expect(missing.body.errors[0].loc).toEqual(['body', 'contact'])
  })

  test('a publishable key in X-Api-Key with a form body (a script posting a form) works too', async () => {
    const res = await post(
      '/v1/leads/inquiries',
      { 'contact.name': 'Ana', 'contact.email': `h.${Date.now()}@example.com`, message: 'Hola' },
      { ...formHeaders(), 'x-api-key': pub.apiKey },
    )
    expect(res.status, res.text).toBe(200)
  })

  test('a secret key also posts forms (no CORS, no limits); its JSON bodies are unchanged', async () => {
    const res = await post(
      '/v1/leads/inquiries',
      { 'contact.name': 'Ana', 'contact.email': `s.${Date.now()}@example.com`, message: 'Hola' },
      { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': biz.apiKey },
    )
    expect(res.status, res.text).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
  })

  test('Idempotency-Key replays a form post', async () => {
    const fields = { api_key: pub.apiKey, 'contact.name': 'Ana', 'contact.email': `idem.${Date.now()}@example.com`, message: 'Hola' }
    const headers = { ...formHeaders(), 'idempotency-key': `form-${Date.now()}` }
    const first = await post('/v1/leads/inquiries', fields, headers)
    const again = await post('/v1/leads/inquiries', fields, headers)
    expect(first.status, first.text).toBe(200)
    expect(again.text).toBe(first.text)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
  })
})

describe('the key in a form field', () => {
  test('a secret key in api_key is a 403 (valid or not), and nothing is stored', async () => {
    const before = await stored(ctx, biz.id)
    for (const key of [biz.apiKey, 'AC_LIVE_notavalidkeyatall']) {
      for (const path of ['/v1/leads/inquiries', '/v1/leads/ingest']) {
        const res = await post(path, { api_key: key, 'contact.name': 'Ana', 'contact.email': 'leak@example.com', message: 'x' })
        expect(res.status, res.text).toBe(403)
        expect(res.body.detail).toContain('never taken from a form field')
        expect(res.text).not.toContain(key.split('.')[1] ?? key)
      }
    }
    expect(await stored(ctx, biz.id)).toEqual(before)
  })

  test('no key anywhere is a 401; a key both in the header and in the field is a 401', async () => {
    const none = await post('/v1/leads/inquiries', { 'contact.name': 'Ana', message: 'x' })
    expect(none.status).toBe(401)
    expect(none.body.detail).toContain('api_key')
    const both = await post('/v1/leads/inquiries', { api_key: pub.apiKey, 'contact.name': 'Ana', message: 'x' }, { ...formHeaders(), 'x-api-key': pub.apiKey })
    expect(both.status).toBe(401)
    const invalid = await post('/v1/leads/inquiries', { api_key: 'AC_PUB_aaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', message: 'x' })
    expect(invalid.status).toBe(401)
  })

  test("a publishable key's prefix cannot be swapped: AC_LIVE_ with its id and secret is refused", async () => {
    const swapped = pub.apiKey.replace('AC_PUB_', 'AC_LIVE_')
    expect((await call(ctx.app, 'GET', '/v1/me', { key: swapped })).status).toBe(401)
    const secretAsPub = biz.apiKey.replace('AC_LIVE_', 'AC_PUB_')
    expect((await call(ctx.app, 'GET', '/v1/me', { key: secretAsPub })).status).toBe(401)
  })
})

describe('_redirect', () => {
  const base = () => ({ api_key: pub.apiKey, 'contact.name': 'Ana', 'contact.email': `r.${Date.now()}.${Math.random()}@example.com`, message: 'Hola' })

  test('success: 303 See Other to it, and the inquiry is stored', async () => {
    const fields = { ...base(), _redirect: `${LANDING}/gracias?src=form#top` }
    const res = await post('/v1/leads/inquiries', fields)
    expect(res.status, res.text).toBe(303)
    expect(res.headers.get('location')).toBe(`${LANDING}/gracias?src=form#top`)
    expect(res.headers.get('x-request-id')).toBeString()
    expect(res.headers.get('ratelimit')).toBeString()
    expect(await leadByEmail(fields['contact.email'])).toBeDefined()
    const ingest = await post('/v1/leads/ingest', {
      api_key: pub.apiKey,
      id: 'r',
      createdAt: 'x',
      source: 's',
      sourcePage: 'p',
      'contact.name': 'Ana',
      'contact.phone': nextPhone(),
      'search.people': '2',
      _redirect: `${LANDING}/gracias`,
    })
    expect(ingest.status).toBe(303)
    expect(ingest.headers.get('location')).toBe(`${LANDING}/gracias`)
  })

  test('a refusal: 303 to it with error (and field for a 422) in its query; nothing stored', async () => {
    const before = await stored(ctx, biz.id)
    const invalid = await post('/v1/leads/inquiries', { ...base(), 'contact.email': 'no-es-un-email', _redirect: `${LANDING}/contacto?lang=es` })
    expect(invalid.status).toBe(303)
    expect(invalid.headers.get('location')).toBe(`${LANDING}/contacto?lang=es&error=validation&field=contact.email`)
    const origin = await post('/v1/leads/inquiries', { ...base(), _redirect: `${LANDING}/contacto` }, formHeaders('https://evil.example'))
    expect(origin.status).toBe(303)
    expect(origin.headers.get('location')).toBe(`${LANDING}/contacto?error=origin-not-allowed`)
    const phone = await post('/v1/leads/ingest', {
      api_key: pub.apiKey,
      id: 'r',
      createdAt: 'x',
      source: 's',
      sourcePage: 'p',
      'contact.name': 'Ana',
      'contact.phone': '12',
      'search.habs': '2',
      _redirect: `${LANDING}/alquiler`,
    })
    expect(phone.headers.get('location')).toBe(`${LANDING}/alquiler?error=validation&field=contact.phone`)
    expect(await stored(ctx, biz.id)).toEqual(before)
  })

  test("outside the key's origins (or not absolute): a 422 on _redirect, answered as JSON", async () => {
    for (const target of [
      'https://evil.example/gracias',
      'http://landing.example.com/gracias',
      'https://landing.example.com:8443/',
      '/gracias',
      'javascript:alert(1)',
    ]) {
      const res = await post('/v1/leads/inquiries', { ...base(), _redirect: target })
      expect(res.status, `${target}: ${res.text}`).toBe(422)
      expect(res.headers.get('location')).toBeNull()
      expect(res.body.errors).toEqual([expect.objectContaining({ loc: ['body', '_redirect'] })])
    }
    const secret = await post(
      '/v1/leads/inquiries',
      { 'contact.name': 'Ana', 'contact.email': 'x@example.com', message: 'x', _redirect: `${LANDING}/` },
      { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': biz.apiKey },
    )
    expect(secret.status).toBe(422)
    expect(secret.body.errors[0].loc).toEqual(['body', '_redirect'])
  })
})

describe('the body rules of §6 hold for form bodies', () => {
  test('over 1 MiB: 413; another type on these paths: 422 naming both types; elsewhere the JSON rule stands', async () => {
    const big = await call(ctx.app, 'POST', '/v1/leads/inquiries', { body: `api_key=${pub.apiKey}&message=${'a'.repeat(1024 * 1024)}`, headers: formHeaders() })
    expect(big.status).toBe(413)
    const plain = await call(ctx.app, 'POST', '/v1/leads/inquiries', {
      key: pub.apiKey,
      body: 'message=x',
      headers: { 'content-type': 'text/plain', origin: LANDING },
    })
    expect(plain.status).toBe(422)
    expect(plain.body.errors[0]).toMatchObject({
      loc: ['header', 'content-type'],
      msg: 'Content-Type must be application/json or application/x-www-form-urlencoded (UTF-8)',
    })
    const latin1 = await call(ctx.app, 'POST', '/v1/leads/inquiries', {
      key: pub.apiKey,
      body: 'message=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=ISO-8859-1', origin: LANDING },
    })
    expect(latin1.status).toBe(422)
    const elsewhere = await call(ctx.app, 'POST', '/v1/leads', {
      key: biz.apiKey,
      body: 'name=Ana',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(elsewhere.status).toBe(422)
    expect(elsewhere.body.errors[0].msg).toBe('Content-Type must be application/json')
  })

  test('bytes that are not UTF-8 and NUL characters are 422s', async () => {
    const bad = await call(ctx.app, 'POST', '/v1/leads/inquiries', {
      body: `api_key=${pub.apiKey}&contact.name=Ana&contact.email=a%40b.co&message=caf%E9`,
      headers: formHeaders(),
    })
    expect(bad.status).toBe(422)
    expect(bad.body.errors[0]).toMatchObject({ loc: ['body'], type: 'form_invalid' })
    const nul = await post('/v1/leads/inquiries', { api_key: pub.apiKey, 'contact.name': 'Ana', 'contact.email': 'a@b.co', message: 'a\u0000b' })
    expect(nul.status).toBe(422)
    expect(nul.body.errors[0].loc).toEqual(['body', 'message'])
  })
})

describe('_gotcha, the honeypot (§16.4)', () => {
  const metric = async () => Number(/^honeypot_hits_total (\d+)$/m.exec((await call(ctx.app, 'GET', '/metrics')).text)?.[1])

  test('filled in, in a form or a JSON body: answered as accepted, nothing stored, counted', async () => {
    const before = await stored(ctx, biz.id)
    const hits = await metric()
    const inquiry = await post('/v1/leads/inquiries', {
      api_key: pub.apiKey,
      'contact.name': 'Bot',
      'contact.email': 'bot@example.com',
      message: 'buy',
      _gotcha: 'http://spam.example',
    })
    expect(inquiry.status, inquiry.text).toBe(200)
    expect(inquiry.body).toEqual({
      status: 'ok',
      inquiry_id: expect.any(Number),
      lead_id: expect.any(Number),
      lead_created: true,
      outreach: 'queued',
      authenticated_as: biz.name,
    })
    const redirected = await post('/v1/leads/inquiries', {
      api_key: pub.apiKey,
      'contact.name': 'Bot',
      'contact.email': 'bot@example.com',
      message: 'buy',
      _gotcha: 'x',
      _redirect: `${LANDING}/gracias`,
    })
    expect(redirected.status).toBe(303)
    expect(redirected.headers.get('location')).toBe(`${LANDING}/gracias`)
    const ingest = await call(ctx.app, 'POST', '/v1/leads/ingest', { key: pub.apiKey, body: { ...ingestBody(), _gotcha: 'x' }, headers: { origin: LANDING } })
    expect(ingest.status, ingest.text).toBe(200)
    expect(ingest.body).toEqual({ status: 'ok', authenticated_as: biz.name })
    const json = await call(ctx.app, 'POST', '/v1/leads/inquiries', {
      key: pub.apiKey,
      body: { ...inquiryBody('bot2@example.com'), _gotcha: 'x' },
      headers: { origin: LANDING },
    })
    expect(json.status).toBe(200)
    expect(await stored(ctx, biz.id)).toEqual(before)
    expect(await metric()).toBe(hits + 4)
  })

  test('left empty: an ordinary request', async () => {
    const email = `human.${Date.now()}@example.com`
    const res = await post('/v1/leads/inquiries', { api_key: pub.apiKey, 'contact.name': 'Ana', 'contact.email': email, message: 'Hola', _gotcha: '' })
    expect(res.status).toBe(200)
    expect(await leadByEmail(email)).toBeDefined()
    const json = await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: pub.apiKey, body: { ...inquiryBody(), _gotcha: '' }, headers: { origin: LANDING } })
    expect(json.status).toBe(200)
  })

  test("a secret key's JSON body is unchanged: _gotcha is an unknown field there", async () => {
    const res = await call(ctx.app, 'POST', '/v1/leads/inquiries', { key: biz.apiKey, body: { ...inquiryBody(), _gotcha: 'x' } })
    expect(res.status).toBe(422)
    expect(res.body.errors[0]).toMatchObject({ loc: ['body', '_gotcha'], msg: 'Unknown field' })
  })
})
