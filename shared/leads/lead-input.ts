/**
 * Lead create/update body → `contacts` columns (contract §4). The TypeBox schemas in schemas.ts
 * check shapes and bounds; this applies the rules a schema cannot: phone normalisation to E.164
 * (api-spec §4.11: numbers without a prefix are Spanish), trimming, and the serialised size of
 * `search_location` (contract §15). Duplicates are not checked here: the unique indexes decide
 * (db/queries/contacts.ts).
 */
import type { ContactColumns } from '../../db/queries/contacts'
import { AppError, type FieldError } from '../platform/errors'
import { INVALID_PHONE_MESSAGE, normalisePhone } from './phones'
import type { LeadCreate, LeadUpdate } from './schemas'
import { searchLocationTooLarge } from './search-location'

/**
 * Only the supplied fields become columns (PATCH semantics; POST supplies defaults through the
 * table's own defaults). Throws one 422 listing every invalid field.
 */
export function leadInputToColumns(input: LeadCreate): ContactColumns & { name: string }
export function leadInputToColumns(input: LeadUpdate): ContactColumns
export function leadInputToColumns(input: LeadUpdate): ContactColumns {
  const errors: FieldError[] = []
  const out: ContactColumns = {}
  if (input.name !== undefined) {
    const name = input.name.trim()
    if (!name) errors.push({ loc: ['body', 'name'], msg: 'Must not be blank', type: 'invalid' })
    out.name = name
  }
  if (input.type !== undefined) out.type = input.type
  if (input.email !== undefined) out.email = input.email === null ? null : input.email.trim()
  if (input.phone !== undefined) {
    if (input.phone === null) out.phone = null
    else {
      const phone = normalisePhone(input.phone)
      if (phone === null) errors.push({ loc: ['body', 'phone'], msg: INVALID_PHONE_MESSAGE, type: 'phone_invalid' })
      out.phone = phone
    }
  }
  if (input.source !== undefined) out.source = input.source
  if (input.operation !== undefined) out.operation = input.operation
  if (input.property_types !== undefined) out.propertyTypes = [...new Set(input.property_types)]
  if (input.rating !== undefined) out.rating = input.rating
  if (input.urgency !== undefined) out.urgency = input.urgency
  if (input.budget_max !== undefined) out.budgetMax = input.budget_max
  if (input.min_bedrooms !== undefined) out.minBedrooms = input.min_bedrooms
  if (input.search_location !== undefined) {
    const tooLarge = searchLocationTooLarge(input.search_location, ['body', 'search_location'])
    if (tooLarge) errors.push(tooLarge)
    out.searchLocation = input.search_location
  }
  if (input.notes !== undefined) out.notes = input.notes
  if (errors.length) {
    const detail = errors.length === 1 ? errors[0].msg : `${errors.length} invalid fields: ${errors.map((e) => e.loc.join('.')).join(', ')}`
    throw new AppError('validation', detail, { errors })
  }
  return out
}
