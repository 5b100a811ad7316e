import { describe, expect, test } from 'bun:test'
import { choosePrimaryPhone, normalisePhone } from '../../shared/leads/phones'

describe('normalisePhone', () => {
  test.each([
    ['+34600111222', '+34600111222'],
    ['600 111 222', '+34600111222'],
    ['0034 600111222', '+34600111222'],
    ['+44 20 7946 0958', '+442079460958'],
    ['  +34 (600) 11-12-22 ', '+34600111222'],
  ])('%p → %p', (input, expected) => expect(normalisePhone(input)).toBe(expected))

  test.each(['', '   ', 'abc', '123', '+34 123', '+999 600111222', 'x'.repeat(100)])('%p is not a phone', (input) => {
    expect(normalisePhone(input)).toBeNull()
  })

  test('non-strings are not phones', () => {
    expect(normalisePhone(null)).toBeNull()
    expect(normalisePhone(undefined)).toBeNull()
  })
})

describe('choosePrimaryPhone (api-spec §4.11 rule 1)', () => {
  const all = { areaCode: '+33', phoneNumber: '612345678', phoneE164: '+447911123456', phone: '600111222', phoneRaw: '+34 611 222 333' }

  test('areaCode + phoneNumber wins first', () => expect(choosePrimaryPhone(all)).toBe('+33612345678'))
  test('areaCode without + and with 00 both combine', () => {
    expect(choosePrimaryPhone({ ...all, areaCode: '33' })).toBe('+33612345678')
    expect(choosePrimaryPhone({ ...all, areaCode: '0033' })).toBe('+33612345678')
  })
  test('phoneE164 wins when the pair is missing or invalid', () => {
    expect(choosePrimaryPhone({ ...all, areaCode: null })).toBe('+447911123456')
    expect(choosePrimaryPhone({ ...all, phoneNumber: '1' })).toBe('+447911123456')
  })
  test('phone wins after phoneE164', () => expect(choosePrimaryPhone({ ...all, areaCode: null, phoneE164: 'nope' })).toBe('+34600111222'))
  test('phoneRaw is the last resort', () => {
    expect(choosePrimaryPhone({ ...all, areaCode: null, phoneE164: null, phone: 'not a phone' })).toBe('+34611222333')
  })
  test('no valid field gives null', () => {
    expect(choosePrimaryPhone({ phone: '12', phoneRaw: null, areaCode: '+34', phoneNumber: 'abc', phoneE164: '' })).toBeNull()
  })
})
