/**
 * Request bounds, the lead rules a schema keyword cannot state (contract §15): a
 * `search_location` is at most 8 KB (8,192 bytes) as serialised JSON, and a lead's notes are at
 * most 10,000 characters — including the notes the rental ingest composes from the form, which
 * must stay within that bound whatever the form sends within its own field bounds.
 * The figures are the contract's, written out here rather than imported.
 */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { Value } from '@sinclair/typebox/value'
import { AppError } from '../../shared/platform/errors'
import { ingestNotes } from '../../shared/leads/ingest'
import { leadInputToColumns } from '../../shared/leads/lead-input'
import { LeadCreateRequest, LeadInquiryRequest, LeadUpdateRequest, RentalIngestRequest } from '../../shared/leads/schemas'

const SEARCH_LOCATION_BYTES = 8192
const NOTES_CHARS = 10_000

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8')

/** The 422's `errors[].loc` of a rule refusal, or null when the input passed. */
function refusedAt(run: () => unknown): (string | number)[][] | null {
  try {
    run()
    return null
  } catch (error) {
    if (!(error instanceof AppError) || error.status !== 422) throw error
    return (error.errors ?? []).map((e) => e.loc)
  }
}

/** `base` with a `pad` key sized so the whole serialises to exactly `target` bytes (null when base alone is larger). */
function padTo(base: Record<string, unknown>, target: number, unit: string): Record<string, unknown> | null {
  const { pad: _, ...rest } = base
  const empty = bytes({ ...rest, pad: '' })
  // What one unit adds to the JSON: escapes (`\"`, `\u0001`) count as written.
  const unitBytes = bytes(unit) - 2
  const room = target - empty
  if (room < 0) return null
  // Multi-byte units fill most of the room; ASCII makes up the remainder exactly.
  const n = Math.floor(room / unitBytes)
  return { ...rest, pad: unit.repeat(n) + 'x'.repeat(room - n * unitBytes) }
}

describe('search_location ≤ 8 KB serialised (contract §15)', () => {
  test('create and update: accepted at 8,192 bytes, 422 naming body.search_location at 8,193 (any object, any characters)', () => {
    const object = fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 })
    const unit = fc.constantFrom('x', 'é', '€', '😀', '"', '\\', '\u0001')
    fc.assert(
      fc.property(object, unit, fc.boolean(), (base, u, update) => {
        const atBound = padTo(base, SEARCH_LOCATION_BYTES, u)
        const over = padTo(base, SEARCH_LOCATION_BYTES + 1, u)
        fc.pre(atBound !== null && over !== null)
        expect(bytes(atBound)).toBe(SEARCH_LOCATION_BYTES)
        expect(bytes(over)).toBe(SEARCH_LOCATION_BYTES + 1)
        const run = (search_location: Record<string, unknown>) => () =>
          update ? leadInputToColumns({ search_location }) : leadInputToColumns({ name: 'Ana', search_location })
        expect(refusedAt(run(atBound!))).toBeNull()
        expect(refusedAt(run(over!))).toEqual([['body', 'search_location']])
      }),
      { numRuns: 200 },
    )
  })

  test('the refusal joins the other rule refusals in one 422', () => {
    const big = { name: 'x'.repeat(SEARCH_LOCATION_BYTES) }
    expect(refusedAt(() => leadInputToColumns({ name: '  ', phone: '123', search_location: big }))).toEqual([
      ['body', 'name'],
      ['body', 'phone'],
      ['body', 'search_location'],
    ])
  })

  test('null clears and is not measured', () => {
    expect(leadInputToColumns({ search_location: null })).toEqual({ searchLocation: null })
  })

  test('the schemas bound its keys (maxProperties) and say the 8 KB rule', () => {
    for (const schema of [LeadCreateRequest, LeadUpdateRequest]) {
      const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))
      const max = (schema.properties.search_location.anyOf[0] as { maxProperties?: number }).maxProperties
      expect(max).toBeNumber()
      expect(Value.Check(schema, { name: 'a', search_location: keys(max!) })).toBe(true)
      expect(Value.Check(schema, { name: 'a', search_location: keys(max! + 1) })).toBe(false)
      expect(JSON.stringify(schema.properties.search_location)).toContain('8,192 bytes')
    }
  })
})

describe('lead notes ≤ 10,000 characters (contract §15)', () => {
  test('create, update and the inquiry lead accept 10,000 and refuse 10,001', () => {
    for (const schema of [LeadCreateRequest, LeadUpdateRequest]) {
      expect(Value.Check(schema, { name: 'a', notes: 'n'.repeat(NOTES_CHARS) })).toBe(true)
      expect(Value.Check(schema, { name: 'a', notes: 'n'.repeat(NOTES_CHARS + 1) })).toBe(false)
    }
    const inquiry = (notes: string) => ({ contact: { name: 'Ana', phone: '600111222' }, message: 'Hola', lead: { notes } })
    expect(Value.Check(LeadInquiryRequest, inquiry('n'.repeat(NOTES_CHARS)))).toBe(true)
    expect(Value.Check(LeadInquiryRequest, inquiry('n'.repeat(NOTES_CHARS + 1)))).toBe(false)
  })

  test('the notes the rental ingest composes stay within 10,000 whatever the form sends within its field bounds', () => {
    const search = RentalIngestRequest.properties.search.properties
    const bound = (s: unknown): number => {
      const max = JSON.stringify(s).match(/"maxLength":(\d+)/)
      if (!max) throw new Error(`unbounded: ${JSON.stringify(s)}`)
      return Number(max[1])
    }
    const textFields = ['entryDate', 'exitDate', 'people', 'area', 'habs', 'pets', 'workSituation', 'freeText'] as const
    const limits = {
      sourcePage: bound(RentalIngestRequest.properties.sourcePage),
      ...Object.fromEntries(textFields.map((f) => [f, bound(search[f])])),
    } as Record<string, number>
    // Non-space characters: whitespace is collapsed in the notes, so it can only shorten them.
    const text = (max: number) => fc.string({ unit: fc.constantFrom('a', 'ñ', '€', 'Z'), maxLength: max })
    const atMost = (max: number) => fc.oneof(fc.constant('w'.repeat(max)), text(max))
    fc.assert(
      fc.property(fc.record(Object.fromEntries(Object.entries(limits).map(([f, max]) => [f, atMost(max)]))), (form) => {
        const { sourcePage, ...rest } = form as Record<string, string>
        expect(ingestNotes({ sourcePage, search: rest }).length).toBeLessThanOrEqual(NOTES_CHARS)
      }),
      { numRuns: 50 },
    )
    const worst = Object.fromEntries(Object.entries(limits).map(([f, max]) => [f, 'w'.repeat(max)]))
    const { sourcePage, ...rest } = worst
    expect(ingestNotes({ sourcePage, search: rest }).length).toBeLessThanOrEqual(NOTES_CHARS)
  })
})
