import { describe, expect, test } from 'bun:test'
import { parseIsoInstant } from '../../shared/platform/iso-time'

describe('updated_since parsing (contract §4)', () => {
  test('dates, date-times, fractions and offsets; no offset is UTC', () => {
    const iso = (s: string) => parseIsoInstant(s)?.toISOString()
    expect(iso('2026-11-01')).toBe('2026-11-01T00:00:00.000Z')
    expect(iso('2026-11-01T10:00')).toBe('2026-11-01T10:00:00.000Z')
    expect(iso('2026-11-01T10:00:05Z')).toBe('2026-11-01T10:00:05.000Z')
    expect(iso('2026-11-01 10:00:05.123456Z')).toBe('2026-11-01T10:00:05.123Z')
    expect(iso('2026-11-01T10:00:00+02:00')).toBe('2026-11-01T08:00:00.000Z')
    expect(iso('2026-11-01T10:00:00-0330')).toBe('2026-11-01T13:30:00.000Z')
    expect(iso('2026-11-01T10:00:00+01')).toBe('2026-11-01T09:00:00.000Z')
    expect(iso('2024-02-29')).toBe('2024-02-29T00:00:00.000Z')
  })

  test('anything else is null', () => {
    for (const s of [
      '',
      'yesterday',
      '2026-02-30',
      '2025-02-29',
      '2026-13-01',
      '2026-11-01T24:00',
      '2026-11-01T10:60',
      '2026-11-01T10:00:00+25:00',
      '1730000000',
      '01/11/2026',
      '2026-1-1',
    ]) {
      expect(parseIsoInstant(s), s).toBeNull()
    }
  })
})
