/**
 * GET /leads query → the filters of the contacts look-up (api-spec §4.7, contract §4). The
 * schema bounds the parameters; this applies what it cannot: `phone` is normalised like stored
 * phones (so `600111222` finds `+34600111222`) and `updated_since` is read as ISO 8601, each
 * refused as a 422 on its parameter.
 */
import type { ContactListQuery } from '../../db/queries/contacts'
import { fieldError } from '../platform/errors'
import { parseIsoInstant } from '../platform/iso-time'
import { INVALID_PHONE_MESSAGE, normalisePhone } from './phones'
import type { LeadListParams } from './schemas'

export function contactListQuery(businessId: number, query: LeadListParams): ContactListQuery {
  let phone: string | undefined
  if (query.phone !== undefined) {
    phone = normalisePhone(query.phone) ?? undefined
    if (phone === undefined) throw fieldError(['query', 'phone'], INVALID_PHONE_MESSAGE, 'phone_invalid')
  }
  let updatedSince: Date | undefined
  if (query.updated_since !== undefined) {
    updatedSince = parseIsoInstant(query.updated_since) ?? undefined
    if (updatedSince === undefined)
      throw fieldError(['query', 'updated_since'], 'Must be an ISO 8601 date or date-time, e.g. 2026-11-01T10:00:00Z', 'datetime_invalid')
  }
  return {
    businessId,
    type: query.type,
    phone,
    email: query.email,
    updatedSince,
    limit: query.limit ?? 100,
    offset: query.offset ?? 0,
  }
}
