/** Standard Webhooks signing (contract §10.2) and event-type patterns (§10.1, §15). */
import { describe, expect, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { canRead, matchesAny, unreadablePatterns, visibleTypes } from '../../shared/events/visibility'
import { generateWebhookSecret, sign, webhookHeaders } from '../../shared/webhooks/signature'

describe('signature', () => {
  test('the same signature as the reference implementation signs', () => {
    for (const [secret, id, ts, body] of [
      ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw9V3N8TWxCtM=', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'],
      [
        generateWebhookSecret(),
        'evt_4kT9qLm2Xw8bZr1aPc0dQ7sE',
        1795612509,
        JSON.stringify({ id: 'evt_4kT9qLm2Xw8bZr1aPc0dQ7sE', data: { object: { name: 'Ñandú €' } } }),
      ],
    ] as const) {
      expect(sign(secret, id, ts, body)).toBe(new Webhook(secret).sign(id, new Date(ts * 1000), body))
    }
  })

  test('two secrets give two space-separated signatures; the reference library accepts each secret alone', () => {
    const [a, b] = [generateWebhookSecret(), generateWebhookSecret()]
    const body = JSON.stringify({ id: 'evt_x', type: 'lead.created' })
    const headers = webhookHeaders([a, b], 'evt_x', Math.floor(Date.now() / 1000), body)
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2)
    expect(() => new Webhook(a).verify(body, headers)).not.toThrow()
    expect(() => new Webhook(b).verify(body, headers)).not.toThrow()
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow()
  })
})

describe('patterns', () => {
  test('types, families and *', () => {
    expect(matchesAny('lead.created', ['lead.created'])).toBe(true)
    expect(matchesAny('lead.updated', ['lead.*'])).toBe(true)
    expect(matchesAny('inquiry.created', ['lead.*'])).toBe(false)
    expect(matchesAny('video.ready', ['*'])).toBe(true)
  })

  test('what a key may subscribe to and see follows its read scopes (contract §15 §10.1)', () => {
    expect(unreadablePatterns(['lead.*', 'property.created', '*'], ['leads:read'])).toEqual(['property.created', '*'])
    // An exact private type needs properties:write; a wildcard needs the family's read scope only (and is sent what the key reads).
    expect(
      unreadablePatterns(['property.created', 'image.ready', 'property.published', 'property.*', 'image.*', '*'], ['leads:read', 'properties:read']),
    ).toEqual(['property.created', 'image.ready'])
    expect(unreadablePatterns(['property.created', 'image.ready', '*'], ['leads:read', 'properties:read', 'properties:write'])).toEqual([])
    expect(visibleTypes(['properties:read'])).toEqual({ exact: ['property.published', 'property.unpublished', 'property.deleted'], prefixes: [] })
    expect(visibleTypes(['properties:read', 'properties:write'], ['lead.created', 'image.*'])).toEqual({ exact: ['image.ready', 'image.failed'], prefixes: [] })
    expect(visibleTypes(['properties:read'], ['lead.created', 'image.*'])).toEqual({ exact: [], prefixes: [] })
    expect(visibleTypes(['properties:write'])).toEqual({ exact: [], prefixes: [] })
    expect(visibleTypes(['leads:ingest'])).toEqual({ exact: [], prefixes: [] })
    // Every read scope: every type, so a read needs no type condition; a narrowing still narrows.
    expect(visibleTypes(['leads:read', 'properties:read', 'properties:write'])).toEqual({ exact: [], prefixes: [''] })
    expect(visibleTypes(['leads:read', 'properties:read', 'properties:write'], ['*'])).toEqual({ exact: [], prefixes: [''] })
    expect(visibleTypes(['leads:read', 'properties:read'], ['property.*', 'lead.created'])).toEqual({
      exact: ['lead.created', 'property.published', 'property.unpublished', 'property.deleted'],
      prefixes: [],
    })
    expect(canRead('property.updated', ['properties:read'])).toBe(false)
    expect(canRead('property.deleted', ['properties:read'])).toBe(true)
    expect(canRead('video.ready', ['properties:write'])).toBe(false)
  })
})
