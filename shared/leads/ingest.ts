/**
 * Rental ingest (api-spec §4.11, contract §4.1): the validated landing-form payload → the lead
 * row that is queued and inserted. Everything that can refuse the request happens here, before
 * the answer (phone → 422, budget → 500); the row carries every column so the worker and the
 * API's fallback insert the very same thing (operations.ts `storeIngestBatch`).
 */
import type { Static } from '@sinclair/typebox'
import type { IngestContactRow } from '../../db/queries/contacts'
import { parseBudgetMax } from './budget'
import { AppError } from '../platform/errors'
import { searchLocationTooLarge } from './search-location'
import type { IngestLead as IngestLeadSchema } from '../platform/jobs'
import { INVALID_PHONE_MESSAGE, choosePrimaryPhone } from './phones'
import type { RentalIngest } from './schemas'

export type IngestLead = Static<typeof IngestLeadSchema>

/**
 * The queued payload is the inserted row: a field the schema has and the insert lacks (or the
 * reverse) fails to compile, so neither can be dropped on the way to the database.
 */
type NoUnmatchedField<T extends never> = T
type _PayloadIsInsertRow = NoUnmatchedField<Exclude<keyof IngestLead, keyof IngestContactRow> | Exclude<keyof IngestContactRow, keyof IngestLead>>

/** Rule 2 of api-spec §4.11. */
export const INGEST_DEFAULTS = {
  type: 'demandante',
  operation: 'alquiler',
  propertyTypes: ['apartamento', 'casa'],
  rating: 3,
  urgency: 'alta-urgencia',
} as const

type Text = string | null | undefined

/** What the ingest reads from the request: the submission's `id` and `createdAt` are not stored. */
export type RentalIngestInput = Pick<RentalIngest, 'source' | 'sourcePage' | 'contact' | 'search'>

/** A bound that keeps `min_bedrooms` meaningful; a larger "whole number" stays only in the notes. */
const MAX_BEDROOMS = 1000

/** `habs` that is a whole number → min_bedrooms; anything else → null (contract §4.1; the raw text stays in the notes). */
export function parseHabs(raw: Text): number | null {
  if (typeof raw !== 'string' || !/^\s*\d{1,4}\s*$/.test(raw)) return null
  const n = Number(raw)
  return n <= MAX_BEDROOMS ? n : null
}

const oneLine = (v: Text) => (typeof v === 'string' ? v.replace(/\s+/g, ' ').trim() : '')

/**
 * The readable summary put in the notes (api-spec §4.11 rule 2): one `Label: value` line per
 * field the spec sends to the notes, in the form's order; missing or blank fields are left out.
 * The free text comes last and keeps its own line breaks.
 */
export function ingestNotes(input: Pick<RentalIngestInput, 'sourcePage' | 'search'>): string {
  const s = input.search
  const lines: string[] = []
  const add = (label: string, value: Text) => {
    const v = oneLine(value)
    if (v) lines.push(`${label}: ${v}`)
  }
  add('Source page', input.sourcePage)
  add('Entry date', s.entryDate)
  add('Exit date', s.exitDate)
  add('People', s.people)
  add('Area', s.area)
  add('Bedrooms (habs)', s.habs)
  add('Pets', s.pets)
  add('Work situation', s.workSituation)
  const free = typeof s.freeText === 'string' ? s.freeText.replace(/\r\n?/g, '\n').trim() : ''
  if (free) lines.push(`Message: ${free}`)
  return lines.join('\n')
}

/**
 * Validates what the schema cannot and builds the row. Throws a 422 (no valid phone, exactly
 * INVALID_PHONE_MESSAGE) or the documented 500 (malformed budget, budget.ts).
 */
export function buildIngestLead(businessId: number, input: RentalIngestInput, receivedAt: Date = new Date()): IngestLead {
  const phone = choosePrimaryPhone(input.contact)
  if (phone === null) {
    throw new AppError('validation', INVALID_PHONE_MESSAGE, {
      errors: [{ loc: ['body', 'contact', 'phone'], msg: INVALID_PHONE_MESSAGE, type: 'phone_invalid' }],
    })
  }
  const name = input.contact.name.trim()
  if (!name)
    throw new AppError('validation', 'body.contact.name: Must not be blank', {
      errors: [{ loc: ['body', 'contact', 'name'], msg: 'Must not be blank', type: 'invalid' }],
    })
  const tooLarge = searchLocationTooLarge(input.search.location, ['body', 'search', 'location'])
  if (tooLarge) throw new AppError('validation', `body.search.location: ${tooLarge.msg}`, { errors: [tooLarge] })
  const budgetMax = parseBudgetMax(input.search.budget)
  const source = input.source.trim()
  return {
    businessId,
    receivedAt: receivedAt.toISOString(),
    name,
    phone,
    source: source || null,
    type: INGEST_DEFAULTS.type,
    operation: INGEST_DEFAULTS.operation,
    propertyTypes: [...INGEST_DEFAULTS.propertyTypes],
    rating: INGEST_DEFAULTS.rating,
    urgency: INGEST_DEFAULTS.urgency,
    budgetMax,
    minBedrooms: parseHabs(input.search.habs),
    searchLocation: input.search.location ?? null,
    notes: ingestNotes(input),
  }
}

/** What identifies an ingested lead: its business and primary phone (the unique index's key). */
export const ingestLeadKey = (businessId: number, phone: string) => `${businessId}\u0000${phone}`

/** Keeps the first lead of each (business, phone): a later duplicate in the same batch never wins. */
export function dedupeIngestLeads(leads: IngestLead[]): IngestLead[] {
  const seen = new Set<string>()
  const out: IngestLead[] = []
  for (const lead of leads) {
    const key = ingestLeadKey(lead.businessId, lead.phone)
    if (seen.has(key)) continue
    seen.add(key)
    out.push(lead)
  }
  return out
}
