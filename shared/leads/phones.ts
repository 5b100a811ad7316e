/**
 * Phone numbers (contract §4, api-spec §4.11 rule 1). One normaliser for every path that stores a
 * phone (lead create/update, rental ingest, inquiries), so the unique index on
 * (business_id, phone) sees one spelling per number. The `max` metadata validates number
 * ranges per country, not only lengths, so typos are refused instead of stored.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max'

/** Numbers written without an international prefix are read as Spanish (api-spec §4.11). */
export const DEFAULT_PHONE_COUNTRY = 'ES' as const

export const INVALID_PHONE_MESSAGE = 'Invalid phone number. Use international format, e.g. +34600111222'

/** E.164 form of `text` when it is a valid number, else null. `00` is read as the `+` prefix. */
export function normalisePhone(text: string | null | undefined): string | null {
  if (typeof text !== 'string') return null
  const trimmed = text.trim()
  if (!trimmed || trimmed.length > 64) return null
  const international = trimmed.startsWith('00') ? `+${trimmed.slice(2)}` : trimmed
  const parsed = parsePhoneNumberFromString(international, DEFAULT_PHONE_COUNTRY)
  return parsed?.isValid() ? parsed.number : null
}

/** `+NN`, `NN` or `00NN` with a national number → E.164, or null. */
function combine(areaCode: string | null | undefined, phoneNumber: string | null | undefined): string | null {
  if (typeof areaCode !== 'string' || typeof phoneNumber !== 'string') return null
  const prefix = areaCode.trim().replace(/^00/, '').replace(/^\+/, '')
  if (!/^\d{1,4}$/.test(prefix) || !phoneNumber.trim()) return null
  return normalisePhone(`+${prefix}${phoneNumber.trim()}`)
}

export interface IngestPhoneFields {
  phone?: string | null
  phoneRaw?: string | null
  areaCode?: string | null
  phoneNumber?: string | null
  phoneE164?: string | null
}

/**
 * Rule 1 of api-spec §4.11: the first valid number of `areaCode`+`phoneNumber`, `phoneE164`,
 * `phone`, `phoneRaw`, in that order; null when none is valid (the caller answers 422).
 */
export function choosePrimaryPhone(contact: IngestPhoneFields): string | null {
  return combine(contact.areaCode, contact.phoneNumber)
    ?? normalisePhone(contact.phoneE164)
    ?? normalisePhone(contact.phone)
    ?? normalisePhone(contact.phoneRaw)
}
