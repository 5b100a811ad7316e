import { describe, expect, test } from 'bun:test'
import { AppError } from '../../shared/platform/errors'
import { InvalidBudgetError, parseBudgetMax } from '../../shared/leads/budget'

describe('search.budget grammar (api-spec §4.11 rule 5, docs/leads.md)', () => {
  test('a whole number is the maximum', () => {
    expect(parseBudgetMax('900')).toBe(900)
    expect(parseBudgetMax('0')).toBe(0)
    expect(parseBudgetMax('0800')).toBe(800)
    expect(parseBudgetMax(' 1200 ')).toBe(1200)
  })

  test('a range gives its upper bound; spaces around the dash are allowed; a reversed range still gives the larger', () => {
    expect(parseBudgetMax('700-900')).toBe(900)
    expect(parseBudgetMax('700 - 900')).toBe(900)
    expect(parseBudgetMax('900-900')).toBe(900)
    expect(parseBudgetMax('900-700')).toBe(900)
  })

  test('missing, null or blank is no budget', () => {
    expect(parseBudgetMax(undefined)).toBeNull()
    expect(parseBudgetMax(null)).toBeNull()
    expect(parseBudgetMax('')).toBeNull()
    expect(parseBudgetMax('   ')).toBeNull()
  })

  test('anything else is malformed: the documented 500 with the raw value in the detail', () => {
    const bad = [
      '1.200',
      '1,200',
      '900.50',
      '€900',
      '900€',
      '900 EUR',
      'mil',
      'abc',
      '-900',
      '+900',
      '700-',
      '-',
      '700--900',
      '700-800-900',
      '700–900',
      '1e3',
      '0x10',
      '１２００',
      '9'.repeat(16),
    ]
    for (const raw of bad) {
      let error: unknown
      try {
        parseBudgetMax(raw)
      } catch (e) {
        error = e
      }
      expect(error, raw).toBeInstanceOf(InvalidBudgetError)
      expect(error).toBeInstanceOf(AppError)
      expect((error as AppError).status).toBe(500)
      expect((error as AppError).code).toBe('invalid_budget')
      expect((error as AppError).detail).toStartWith(`Invalid budget ${JSON.stringify(raw)}: use a whole number or a range of whole numbers`)
    }
  })

  test('a huge malformed value is cut in the detail', () => {
    expect(() => parseBudgetMax('x'.repeat(500))).toThrow(/^Invalid budget "x{60}…"/)
  })
})
