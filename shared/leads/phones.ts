/**
 * Phone numbers (contract §4, api-spec §4.11 rule 1). One normaliser for every path that stores a
 * phone (lead create/update, rental ingest, inquiries), so the unique index on
 * (business_id, phone) sees one spelling per number. The `max` metadata validates number
 * ranges per country, not only lengths, so typos are refused instead of stored.
 */
import { Metadata, parsePhoneNumberFromString } from 'libphonenumber-js/max'

/** Numbers written without an international prefix are read as Spanish (api-spec §4.11). */
export const DEFAULT_PHONE_COUNTRY = 'ES' as const

export const INVALID_PHONE_MESSAGE = 'Invalid phone number. Use international format, e.g. +34600111222'

/** E.164 form of `text` when it is a valid number, else null. `00` is read as the `+` prefix. */
export function normalisePhone(text: string | null | undefined): string | null {
  if (typeof text !== 'string') return null
  const trimmed = text.trim()
  if (!trimmed || trimmed.length > 64) return null
  const international = trimmed.startsWith('00') ? `+${trimmed.slice(2)}` : trimmed
  const spanish = SPANISH_PLAIN.exec(international)
  if (spanish && isValidSpanishNumber?.(spanish[1])) return `+34${spanish[1]}`
  const parsed = parsePhoneNumberFromString(international, DEFAULT_PHONE_COUNTRY)
  return parsed?.isValid() ? parsed.number : null
}

/**
 * The two spellings most landing forms send, `+34` and nine digits or the nine digits alone, take
 * a fast path: the general parser compiles a regular expression per pattern on every call and was
 * a sixth of the ingest route's CPU. The fast path only ever says yes; anything it does not
 * accept goes through the full parser, so it cannot refuse a number the parser would store.
 * test/unit/phones-fast-path.test.ts compares both on random numbers.
 */
const SPANISH_PLAIN = /^(?:\+34)?(\d{9})$/

/** libphonenumber's number types: a number of any of them is valid. */
const NUMBER_TYPES = ['FIXED_LINE', 'MOBILE', 'PREMIUM_RATE', 'TOLL_FREE', 'SHARED_COST', 'VOIP', 'PERSONAL_NUMBER', 'PAGER', 'UAN', 'VOICEMAIL']

/** The `getNumberType` test of libphonenumber for Spain (any type → valid), with its patterns compiled once. */
const isValidSpanishNumber: ((national: string) => boolean) | undefined = spanishValidator()

/** The runtime's numbering-plan methods the published typings leave out. */
interface RuntimePlan {
  nationalNumberPattern(): string
  type(name: string): { pattern(): string; possibleLengths(): number[] | undefined } | undefined
}

function spanishValidator(): ((national: string) => boolean) | undefined {
  const metadata = new Metadata()
  metadata.selectNumberingPlan(DEFAULT_PHONE_COUNTRY)
  const plan = metadata.numberingPlan as unknown as Partial<RuntimePlan> | undefined
  // A library version without these methods simply loses the fast path.
  if (typeof plan?.nationalNumberPattern !== 'function' || typeof plan.type !== 'function') return undefined
  const whole = (pattern: string) => new RegExp(`^(?:${pattern})$`)
  const general = whole(plan.nationalNumberPattern())
  const typeOf = plan.type.bind(plan)
  const types = NUMBER_TYPES.flatMap((name) => {
    const type = typeOf(name)
    const pattern = type?.pattern()
    return type && pattern ? [{ re: whole(pattern), lengths: type.possibleLengths() }] : []
  })
  return (national) => general.test(national) && types.some((t) => (!t.lengths || t.lengths.includes(national.length)) && t.re.test(national))
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
  return (
    combine(contact.areaCode, contact.phoneNumber) ?? normalisePhone(contact.phoneE164) ?? normalisePhone(contact.phone) ?? normalisePhone(contact.phoneRaw)
  )
}
