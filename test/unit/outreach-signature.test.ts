import { describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { computeSignature, generateSigningSecret, signatureHeader, verifyWebhookSignature } from '../../shared/outreach/signature'
import { deliveryBodyText, outreachBackoffMs, type DeliveryBody } from '../../shared/outreach/delivery'

const SECRET = 'whsec_test-secret'
const BODY = '{"type":"inquiry.created","delivery_id":"dlv_1"}'

describe('webhook signature', () => {
  test('secrets are whsec_ + 256 random bits', () => {
    const a = generateSigningSecret()
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    expect(generateSigningSecret()).not.toBe(a)
  })

  test('v1 is hex HMAC-SHA256(secret, "<t>.<body>") — independently computed', () => {
    const expected = createHmac('sha256', SECRET).update(`1700000000.${BODY}`).digest('hex')
    expect(computeSignature(SECRET, 1700000000, BODY)).toBe(expected)
    expect(signatureHeader(SECRET, 1700000000, BODY)).toBe(`t=1700000000,v1=${expected}`)
  })

  test('verification accepts the header it made', () => {
    const now = 1700000000
    expect(verifyWebhookSignature(SECRET, signatureHeader(SECRET, now, BODY), BODY, { now })).toEqual({ ok: true, timestamp: now })
  })

  test('another secret, a changed body or a changed timestamp is a mismatch', () => {
    const now = 1700000000
    const header = signatureHeader(SECRET, now, BODY)
    expect(verifyWebhookSignature('whsec_other', header, BODY, { now })).toEqual({ ok: false, reason: 'mismatch' })
    expect(verifyWebhookSignature(SECRET, header, BODY + ' ', { now })).toEqual({ ok: false, reason: 'mismatch' })
    expect(verifyWebhookSignature(SECRET, header.replace('t=1700000000', 't=1700000001'), BODY, { now })).toEqual({ ok: false, reason: 'mismatch' })
  })

  test('a timestamp outside the tolerance is stale', () => {
    const header = signatureHeader(SECRET, 1700000000, BODY)
    expect(verifyWebhookSignature(SECRET, header, BODY, { now: 1700000000 + 301 })).toEqual({ ok: false, reason: 'stale' })
    expect(verifyWebhookSignature(SECRET, header, BODY, { now: 1700000000 + 301, toleranceSeconds: 600 }).ok).toBe(true)
  })

  test.each([null, '', 't=1', 'v1=abc', 't=x,v1=' + 'a'.repeat(64), 'garbage'])('malformed header %p', (header) => {
    expect(verifyWebhookSignature(SECRET, header, BODY, { now: 1 })).toEqual({ ok: false, reason: 'malformed' })
  })

  test('any of several v1 entries may match (rotation-friendly)', () => {
    const now = 1700000000
    const good = computeSignature(SECRET, now, BODY)
    expect(verifyWebhookSignature(SECRET, `t=${now},v1=${'0'.repeat(64)},v1=${good}`, BODY, { now }).ok).toBe(true)
  })
})

describe('delivery body', () => {
  test('keys in the order of contract §8, whatever the stored order', () => {
    const stored = {
      source_page: 'https://x.test/p',
      source: 'web',
      message: 'Hola',
      contact: { phone: '+34600111222', email: null, name: 'Ana' },
      property_id: null,
      lead_created: true,
      lead_id: 2,
      inquiry_id: 1,
      created_at: '2026-01-01T00:00:00.000Z',
      delivery_id: 'dlv_1',
      type: 'inquiry.created',
    } as DeliveryBody
    expect(Object.keys(JSON.parse(deliveryBodyText(stored)))).toEqual([
      'type',
      'delivery_id',
      'created_at',
      'inquiry_id',
      'lead_id',
      'lead_created',
      'property_id',
      'contact',
      'message',
      'source',
      'source_page',
    ])
    expect(deliveryBodyText(stored)).toContain('"contact":{"name":"Ana","email":null,"phone":"+34600111222"}')
  })
})

describe('retry schedule', () => {
  test('30 s doubling, capped at 6 h, ≥ 24 h over 20 attempts', () => {
    const base = 30_000
    const max = 6 * 3600_000
    expect([1, 2, 3, 4].map((n) => outreachBackoffMs(n, base, max))).toEqual([30_000, 60_000, 120_000, 240_000])
    expect(outreachBackoffMs(10, base, max)).toBe(256 * 60_000)
    expect(outreachBackoffMs(11, base, max)).toBe(max)
    expect(outreachBackoffMs(19, base, max)).toBe(max)
    // 20 attempts → 19 waits between them.
    let total = 0
    for (let n = 1; n <= 19; n++) total += outreachBackoffMs(n, base, max)
    expect(total).toBeGreaterThanOrEqual(24 * 3600_000)
    expect(Math.round((total / 3600_000) * 10) / 10).toBe(62.5)
  })
})
