/**
 * Plain decimals (contract §15 §3 prices: no output in exponent notation): plainNumber gives the
 * same value back for every finite double, and plainJson the same document, with no exponent
 * outside strings and strings untouched.
 */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { plainJson, plainNumber } from '../../shared/platform/plain-json'

describe('plainNumber', () => {
  test('examples', () => {
    expect(plainNumber(1e-7)).toBe('0.0000001')
    expect(plainNumber(-2.5e-8)).toBe('-0.000000025')
    expect(plainNumber(1.5e21)).toBe('1500000000000000000000')
    expect(plainNumber(1e308)).toBe('1' + '0'.repeat(308))
    expect(plainNumber(5e-324)).toBe(`0.${'0'.repeat(323)}5`)
    expect(plainNumber(1.2345e-5)).toBe('0.000012345')
    expect(plainNumber(123.5)).toBe('123.5')
    expect(plainNumber(-0)).toBe('0')
  })

  test('any finite double: no exponent, the same value read back', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        const text = plainNumber(d)
        expect(text).not.toMatch(/[eE]/)
        expect(Number(text)).toBe(d === 0 ? 0 : d)
      }),
      { numRuns: 20000 },
    )
  })
})

describe('plainJson', () => {
  test('numbers rewritten outside strings only', () => {
    expect(plainJson({ a: 1e-7, b: '1e-7', c: [1e21, 'x"1e+21'], d: { e: -3e-9 } })).toBe(
      '{"a":0.0000001,"b":"1e-7","c":[1000000000000000000000,"x\\"1e+21"],"d":{"e":-0.000000003}}',
    )
    expect(plainJson({ a: 1, b: 'plain' })).toBe('{"a":1,"b":"plain"}')
  })

  test('any JSON value: the same document, no exponent in a number', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = plainJson(value)
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)))
        expect(text.replace(/"(?:[^"\\]|\\.)*"/g, '""')).not.toMatch(/\d[eE]/)
      }),
      { numRuns: 5000 },
    )
  })
})
