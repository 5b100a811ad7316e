/** The pure rules of contract §16: origins, rates, key prefixes, client addresses, form bodies, redirects. */
import { describe, expect, test } from 'bun:test'
import { clientAddress, bucket, UNKNOWN_ADDRESS } from '../../api/client-address'
import { redirectTarget, refusalLocation, splitForm } from '../../api/browser-access'
import { generateApiKey, looksSecret, parseApiKey } from '../../shared/access/api-key-format'
import { parseOrigin, parseOrigins, parseRate, SettingError } from '../../shared/access/publishable'
import { formLoc, formToBody, parseFormPairs } from '../../shared/platform/form-body'
import { AppError } from '../../shared/platform/errors'
import { LeadInquiryRequest, RentalIngestRequest } from '../../shared/leads/schemas'

const access = { origins: ['https://landing.example.com', 'http://localhost:8080'], ratePerIp: parseRate('10/min'), rate: parseRate('600/min') }

describe('origins (§16.1)', () => {
  test('canonical as browsers send them: host lower-cased, punycode, default port dropped', () => {
    expect(parseOrigin('https://Landing.Example.com')).toBe('https://landing.example.com')
    expect(parseOrigin('https://landing.example.com:443')).toBe('https://landing.example.com')
    expect(parseOrigin('https://landing.example.com:8443')).toBe('https://landing.example.com:8443')
    expect(parseOrigin('https://mañana.example')).toBe('https://xn--maana-pta.example')
    expect(parseOrigin('http://localhost:3000')).toBe('http://localhost:3000')
    expect(parseOrigin('http://127.0.0.1')).toBe('http://127.0.0.1')
  })

  test('refused: http elsewhere, paths (a trailing slash too), queries, fragments, credentials, wildcards, other schemes', () => {
    for (const bad of [
      'http://landing.example.com',
      'http://[::1]:3000',
      'https://a.example/',
      'https://a.example/form',
      'https://a.example?x',
      'https://a.example#x',
      'https://u:p@a.example',
      'https://*.example.com',
      'ftp://a.example',
      'a.example',
      '',
    ]) {
      expect(() => parseOrigin(bad), bad).toThrow(SettingError)
    }
  })

  test('1 to 20, duplicates merged', () => {
    expect(parseOrigins('https://a.example, https://A.example,https://b.example')).toEqual(['https://a.example', 'https://b.example'])
    expect(() => parseOrigins(' , ')).toThrow('at least one origin')
    expect(() => parseOrigins(Array.from({ length: 21 }, (_, i) => `https://s${i}.example`).join(','))).toThrow('at most 20')
  })
})

describe('rates (§16.1)', () => {
  test('N/s, N/min, N/h with N ≥ 1', () => {
    expect(parseRate('10/min')).toEqual({ points: 10, seconds: 60, text: '10/min' })
    expect(parseRate('1/s')).toEqual({ points: 1, seconds: 1, text: '1/s' })
    expect(parseRate(' 600/h ')).toEqual({ points: 600, seconds: 3600, text: '600/h' })
    for (const bad of ['0/min', '10', '10/m', '10/day', '-1/s', '1.5/s', '010/s', '10 / min']) expect(() => parseRate(bad), bad).toThrow(SettingError)
  })
})

describe('key prefixes', () => {
  test('AC_LIVE_ is a secret key, AC_PUB_ a publishable one, both the same shape', () => {
    const secret = generateApiKey('secret')
    const pub = generateApiKey('publishable')
    expect(parseApiKey(secret.apiKey)).toEqual({ kind: 'secret', keyId: secret.keyId, secret: secret.secret })
    expect(parseApiKey(pub.apiKey)).toEqual({ kind: 'publishable', keyId: pub.keyId, secret: pub.secret })
    expect(pub.apiKey).toStartWith('AC_PUB_')
    expect(parseApiKey(`AC_TEST_${pub.keyId}.${pub.secret}`)).toBeNull()
    expect(looksSecret(secret.apiKey)).toBe(true)
    expect(looksSecret('AC_LIVE_garbage')).toBe(true)
    expect(looksSecret(pub.apiKey)).toBe(false)
  })
})

describe('client address (§16.4)', () => {
  test('the peer, X-Forwarded-For ignored without TRUST_PROXY_HOPS', () => {
    expect(clientAddress('203.0.113.9', () => '10.0.0.1', 0)).toBe('10.0.0.1')
    expect(clientAddress(null, () => undefined, 0)).toBe(UNKNOWN_ADDRESS)
  })

  test('with N hops, the N-th address from the right; a forged left part changes nothing', () => {
    expect(clientAddress('198.51.100.7, 203.0.113.9', () => '10.0.0.1', 1)).toBe('203.0.113.9')
    expect(clientAddress('1.1.1.1, 198.51.100.7, 203.0.113.9', () => '10.0.0.1', 1)).toBe('203.0.113.9')
    expect(clientAddress('198.51.100.7, 203.0.113.9', () => '10.0.0.1', 2)).toBe('198.51.100.7')
    expect(clientAddress('203.0.113.9', () => '10.0.0.1', 2)).toBe('203.0.113.9')
    expect(clientAddress(null, () => '10.0.0.1', 1)).toBe('10.0.0.1')
    expect(clientAddress('not-an-address', () => '10.0.0.1', 1)).toBe('10.0.0.1')
  })

  test('the peer is not asked when X-Forwarded-For names the client', () => {
    const unasked = () => {
      throw new Error('peer asked')
    }
    expect(clientAddress('198.51.100.7, 203.0.113.9', unasked, 1)).toBe('203.0.113.9')
  })

  test('IPv6 counted by its /64; IPv4-mapped as IPv4', () => {
    expect(bucket('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64')
    expect(bucket('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64')
    expect(bucket('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(bucket('::1')).toBe('0:0:0:0::/64')
    expect(bucket('::ffff:192.0.2.1')).toBe('192.0.2.1')
    expect(bucket('192.0.2.1')).toBe('192.0.2.1')
    expect(clientAddress('[2001:db8:1:2::9]', () => undefined, 1)).toBe('2001:db8:1:2::/64')
  })
})

describe('form bodies (§16.3): read by the JSON schema', () => {
  const pairs = (q: string) => parseFormPairs(q)

  test('dotted names nest; numbers, booleans and arrays as the schema says; empty optional fields left out', () => {
    const form =
      'contact.name=Ana+Mar%C3%ADa&contact.email=&contact.phone=%2B34600111222&message=Hola&property_id=42&outreach=off&' +
      'lead.rating=4&lead.budget_max=1200.5&lead.property_types=casa&source_page='
    const body = formToBody(pairs(form), LeadInquiryRequest)
    expect(body).toEqual({
      contact: { name: 'Ana María', phone: '+34600111222' },
      message: 'Hola',
      property_id: 42,
      outreach: false,
      lead: { rating: 4, budget_max: 1200.5, property_types: ['casa'] },
    })
  })

  test('a repeated name is an array; on a scalar field it stays one for the schema to refuse', () => {
    expect(formToBody(pairs('lead.property_types=casa&lead.property_types=apartamento'), LeadInquiryRequest)).toEqual({
      lead: { property_types: ['casa', 'apartamento'] },
    })
    expect(formToBody(pairs('message=a&message=b'), LeadInquiryRequest)).toEqual({ message: ['a', 'b'] })
  })

  test('values that do not read as their type stay text; records and unknown names nest as written', () => {
    expect(formToBody(pairs('lead.rating=four&outreach=maybe'), LeadInquiryRequest)).toEqual({ lead: { rating: 'four' }, outreach: 'maybe' })
    expect(formToBody(pairs('search.location.name=Valencia&search.habs=2&contact.nick=x'), RentalIngestRequest)).toEqual({
      search: { location: { name: 'Valencia' }, habs: '2' },
      contact: { nick: 'x' },
    })
  })

  test('required fields keep an empty value (the schema names them)', () => {
    expect(formToBody(pairs('contact.name=&message='), LeadInquiryRequest)).toEqual({ contact: { name: '' }, message: '' })
  })

  test('refused before validation: a name both a value and an object, empty parts, malformed escapes', () => {
    const refusal = (f: () => unknown) => {
      try {
        f()
      } catch (error) {
        return (error as AppError).errors?.[0]
      }
      return undefined
    }
    expect(refusal(() => formToBody(pairs('contact=x&contact.name=y'), LeadInquiryRequest))).toMatchObject({
      loc: ['body', 'contact.name'],
      type: 'form_conflict',
    })
    expect(refusal(() => formToBody(pairs('contact..name=y'), LeadInquiryRequest))).toMatchObject({ loc: ['body', 'contact..name'], type: 'form_name' })
    expect(refusal(() => parseFormPairs('message=%E9'))).toMatchObject({ loc: ['body'], type: 'form_invalid' })
  })

  test('__proto__ is an own field the schema refuses, never the prototype', () => {
    const body = formToBody(pairs('__proto__.polluted=yes&contact.__proto__=x'), LeadInquiryRequest)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.keys(body)).toEqual(['__proto__', 'contact'])
  })

  test('loc names the dotted field; array indexes stay apart', () => {
    expect(formLoc(['body', 'contact', 'phone'])).toEqual(['body', 'contact.phone'])
    expect(formLoc(['body', 'lead', 'property_types', 1])).toEqual(['body', 'lead.property_types', 1])
    expect(formLoc(['body'])).toEqual(['body'])
    expect(formLoc(['header', 'content-type'])).toEqual(['header', 'content-type'])
  })

  test('reserved fields are taken out: api_key, _redirect, _gotcha (filled in or not)', () => {
    expect(splitForm(pairs('api_key=k&_redirect=https%3A%2F%2Fa.example&_gotcha=&message=x'))).toEqual({
      fields: [['message', 'x']],
      apiKey: 'k',
      redirect: 'https://a.example',
      gotcha: false,
    })
    expect(splitForm(pairs('_gotcha=buy+now')).gotcha).toBe(true)
  })
})

describe('_redirect (§16.3)', () => {
  test("an absolute URL on one of the key's origins, exactly", () => {
    expect(redirectTarget(access, 'https://landing.example.com/gracias?a=1').href).toBe('https://landing.example.com/gracias?a=1')
    for (const bad of ['/gracias', 'https://evil.example/', 'http://landing.example.com/', 'https://landing.example.com:444/', 'javascript:alert(1)']) {
      expect(() => redirectTarget(access, bad), bad).toThrow(AppError)
    }
    expect(() => redirectTarget(undefined, 'https://landing.example.com/')).toThrow('secret key has no origins')
  })

  test("a refusal adds error (the problem type's last segment) and, for a 422, field; the fragment stays", () => {
    const to = new URL('https://landing.example.com/gracias?lang=es#form')
    expect(
      refusalLocation(to, { type: 'urn:problem-type:validation', status: 422, errors: [{ loc: ['body', 'contact.phone'] }, { loc: ['body', 'message'] }] }),
    ).toBe('https://landing.example.com/gracias?lang=es&error=validation&field=contact.phone#form')
    expect(refusalLocation(to, { type: 'urn:problem-type:rate-limited', status: 429 })).toBe(
      'https://landing.example.com/gracias?lang=es&error=rate-limited#form',
    )
  })
})
