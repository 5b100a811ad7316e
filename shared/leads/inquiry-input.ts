/**
 * From a validated `POST /leads/inquiries` body to the values stored (contract §4.2): the rules
 * the schema cannot express — at least one of email and phone, and a phone that normalises to
 * E.164 — reported as one 422 with every problem.
 */
import { AppError, type FieldError } from '../platform/errors'
import { INVALID_PHONE_MESSAGE, normalisePhone } from './phones'
import type { LeadInquiryInput } from './schemas'

/** What an inquiry stores: the contact to find or create, and the inquiry itself. */
export type InquiryValues = ReturnType<typeof inquiryValuesOf>

export function inquiryValuesOf(input: LeadInquiryInput) {
  const errors: FieldError[] = []
  const email = input.contact.email?.trim() || null
  const rawPhone = input.contact.phone ?? null
  const phone = rawPhone === null ? null : normalisePhone(rawPhone)
  if (rawPhone !== null && phone === null) errors.push({ loc: ['body', 'contact', 'phone'], msg: INVALID_PHONE_MESSAGE, type: 'phone_invalid' })
  if (email === null && rawPhone === null) errors.push({ loc: ['body', 'contact'], msg: 'At least one of email and phone is required', type: 'missing' })
  if (errors.length) {
    throw new AppError(
      'validation',
      errors.length === 1
        ? `${errors[0].loc.join('.')}: ${errors[0].msg}`
        : `${errors.length} invalid fields: ${errors.map((e) => e.loc.join('.')).join(', ')}`,
      { errors },
    )
  }
  const lead = input.lead ?? {}
  return {
    contact: {
      type: lead.type ?? ('demandante' as const),
      name: input.contact.name.trim(),
      email,
      phone,
      source: input.source ?? null,
      operation: lead.operation ?? null,
      propertyTypes: lead.property_types ?? [],
      rating: lead.rating ?? null,
      urgency: lead.urgency ?? null,
      budgetMax: lead.budget_max ?? null,
      minBedrooms: lead.min_bedrooms ?? null,
      notes: lead.notes ?? '',
    },
    propertyId: input.property_id ?? null,
    message: input.message,
    source: input.source ?? null,
    sourcePage: input.source_page ?? null,
    outreach: input.outreach !== false,
  }
}
