import { describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { AppError } from '../../shared/platform/errors'
import { INGEST_DEFAULTS, buildIngestLead, dedupeIngestLeads, ingestNotes, parseHabs, type RentalIngestInput } from '../../shared/leads/ingest'
import { IngestLead } from '../../shared/platform/jobs'
import { INVALID_PHONE_MESSAGE } from '../../shared/leads/phones'

const input = (over: Partial<RentalIngestInput> = {}, search: RentalIngestInput['search'] = {}): RentalIngestInput => ({
  source: 'landing-alquiler',
  sourcePage: 'https://example.com/alquiler',
  contact: { name: 'Lucía Martín', phone: '600111222' },
  search,
  ...over,
})

describe('ingest notes summary (api-spec §4.11 rule 2)', () => {
  test('every field the form sends to the notes, one readable line each, in the form’s order', () => {
    const notes = ingestNotes({
      sourcePage: 'https://example.com/alquiler',
      search: {
        budget: '800-1100',
        entryDate: '2026-12-01',
        exitDate: '2027-06-30',
        people: '2',
        area: 'Ruzafa',
        habs: 'dos o tres',
        pets: 'un gato',
        workSituation: 'Contrato indefinido',
        location: { name: 'Valencia' },
        freeText: 'Busco piso luminoso.\r\nMejor con ascensor.',
      },
    })
    expect(notes).toBe(
      [
        'Source page: https://example.com/alquiler',
        'Entry date: 2026-12-01',
        'Exit date: 2027-06-30',
        'People: 2',
        'Area: Ruzafa',
        'Bedrooms (habs): dos o tres',
        'Pets: un gato',
        'Work situation: Contrato indefinido',
        'Message: Busco piso luminoso.\nMejor con ascensor.',
      ].join('\n'),
    )
  })

  test('missing, null and blank fields are left out; other fields stay on one line', () => {
    expect(ingestNotes({ sourcePage: 'https://x.example/', search: { people: '  ', pets: null, area: 'Centro\nNorte', freeText: '' } })).toBe(
      'Source page: https://x.example/\nArea: Centro Norte',
    )
    expect(ingestNotes({ sourcePage: '', search: {} })).toBe('')
  })
})

describe('habs → min_bedrooms (contract §4.1)', () => {
  test('a whole number becomes min_bedrooms; anything else is null', () => {
    expect(parseHabs('2')).toBe(2)
    expect(parseHabs(' 3 ')).toBe(3)
    expect(parseHabs('0')).toBe(0)
    for (const v of ['2.5', 'dos', '2-3', '+2', '', '-1', '99999', undefined, null]) expect(parseHabs(v), String(v)).toBeNull()
  })
})

describe('buildIngestLead', () => {
  test('applies the rule-2 defaults and the parsed fields; the row matches the job schema', () => {
    const lead = buildIngestLead(7, input({}, { budget: '700-900', habs: '2', location: { name: 'Valencia' } }), new Date('2026-11-01T10:00:00Z'))
    expect(lead).toEqual({
      businessId: 7,
      receivedAt: '2026-11-01T10:00:00.000Z',
      name: 'Lucía Martín',
      phone: '+34600111222',
      source: 'landing-alquiler',
      type: 'demandante',
      operation: 'alquiler',
      propertyTypes: ['apartamento', 'casa'],
      rating: 3,
      urgency: 'alta-urgencia',
      budgetMax: 900,
      minBedrooms: 2,
      searchLocation: { name: 'Valencia' },
      notes: 'Source page: https://example.com/alquiler\nBedrooms (habs): 2',
    })
    expect(Value.Check(IngestLead, lead)).toBe(true)
    expect(INGEST_DEFAULTS.propertyTypes).toEqual(['apartamento', 'casa'])
  })

  test('the primary phone follows rule 1', () => {
    const lead = buildIngestLead(1, input({ contact: { name: 'x', phone: '600111222', phoneE164: '+34600111333', areaCode: '+33', phoneNumber: '612345678' } }))
    expect(lead.phone).toBe('+33612345678')
  })

  test('no valid phone anywhere is a 422 whose detail is exactly the documented message', () => {
    try {
      buildIngestLead(1, input({ contact: { name: 'x', phone: '12', phoneRaw: 'abc', phoneE164: null } }))
      throw new Error('expected a refusal')
    } catch (e) {
      expect(e).toBeInstanceOf(AppError)
      expect((e as AppError).status).toBe(422)
      expect((e as AppError).detail).toBe(INVALID_PHONE_MESSAGE)
      expect((e as AppError).errors).toEqual([{ loc: ['body', 'contact', 'phone'], msg: INVALID_PHONE_MESSAGE, type: 'phone_invalid' }])
    }
  })

  test('a malformed budget throws the 500; a missing one is null', () => {
    expect(() => buildIngestLead(1, input({}, { budget: '1.200€' }))).toThrow('Invalid budget "1.200€"')
    expect(buildIngestLead(1, input()).budgetMax).toBeNull()
  })

  test('a blank source is stored as null; the name is trimmed', () => {
    const lead = buildIngestLead(1, input({ source: '  ', contact: { name: '  Ana ', phone: '600111222' } }))
    expect(lead.source).toBeNull()
    expect(lead.name).toBe('Ana')
  })

  test('dedupe keeps the first lead per business and phone', () => {
    const a = buildIngestLead(1, input({ contact: { name: 'first', phone: '600111222' } }))
    const b = buildIngestLead(1, input({ contact: { name: 'second', phone: '+34 600 111 222' } }))
    const c = buildIngestLead(2, input({ contact: { name: 'other business', phone: '600111222' } }))
    expect(dedupeIngestLeads([a, b, c]).map((l) => l.name)).toEqual(['first', 'other business'])
  })
})
