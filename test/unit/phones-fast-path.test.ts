/**
 * normalisePhone's fast path for plain Spanish numbers must give exactly what the full parser
 * gives. Random numbers are drawn over every leading digit pair (valid and invalid ranges alike),
 * in each spelling the fast path takes, and compared with libphonenumber's own answer.
 */
import { describe, expect, test } from 'bun:test'
import { parsePhoneNumberFromString } from 'libphonenumber-js/max'
import { normalisePhone } from '../../shared/leads/phones'
// Seeded, so a failure can be replayed.
import { prng as random } from '../faults/load'

const reference = (text: string) => {
  const trimmed = text.trim()
  const parsed = parsePhoneNumberFromString(trimmed.startsWith('00') ? `+${trimmed.slice(2)}` : trimmed, 'ES')
  return parsed?.isValid() ? parsed.number : null
}

describe('normalisePhone fast path for Spanish numbers', () => {
  test('agrees with the full parser on 60,000 random numbers in every plain spelling', () => {
    const r = random(19)
    const digits = (n: number) => Array.from({ length: n }, () => Math.floor(r() * 10)).join('')
    let valid = 0
    for (let i = 0; i < 20_000; i++) {
      // Every two-digit start appears, so each numbering range (and the gaps between them) is drawn.
      const national = String(i % 100).padStart(2, '0') + digits(7)
      for (const text of [national, `+34${national}`, `0034${national}`]) {
        const expected = reference(text)
        if (expected) valid++
        expect({ text, got: normalisePhone(text) }).toEqual({ text, got: expected })
      }
    }
    // Both outcomes are exercised in bulk.
    expect(valid).toBeGreaterThan(10_000)
    expect(valid).toBeLessThan(50_000)
  })

  test('agrees on the narrow ranges of the numbering plan', () => {
    // Ranges whose validity depends on more than the first two digits.
    for (const start of [
      '96906',
      '969060',
      '96906109',
      '97390',
      '973912',
      '400',
      '401',
      '51',
      '52',
      '70',
      '71',
      '74',
      '78',
      '79',
      '800',
      '803',
      '805',
      '900',
      '901',
      '902',
      '903',
      '905',
    ]) {
      for (let i = 0; i < 200; i++) {
        const national = (start + String(i * 7919).padStart(9, '0')).slice(0, 9)
        expect({ national, got: normalisePhone(national) }).toEqual({ national, got: reference(national) })
        expect({ national, got: normalisePhone(`+34${national}`) }).toEqual({ national, got: reference(`+34${national}`) })
      }
    }
  })
})
