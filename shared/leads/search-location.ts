/**
 * contract §15: a lead's `search_location` is at most 8 KB serialised. Read as 8,192 bytes of the
 * value's compact JSON (`JSON.stringify`) in UTF-8, so the spacing or escapes a client used do not
 * count. No JSON Schema keyword measures this; the schemas bound the key count, and the lead
 * rules (lead-input.ts, and the rental ingest) call this.
 */
import type { FieldError } from '../platform/errors'
import { MAX_SEARCH_LOCATION_BYTES } from './schemas'

const MESSAGE = `Must be at most ${MAX_SEARCH_LOCATION_BYTES.toLocaleString('en')} bytes as JSON`

/** The 422 entry for a search location over the bound, at `loc`; null when within it (or absent). */
export function searchLocationTooLarge(value: unknown, loc: (string | number)[]): FieldError | null {
  if (value === null || value === undefined) return null
  const json = JSON.stringify(value)
  // UTF-8 takes one to three bytes per UTF-16 unit, so most values need no byte count.
  if (json.length * 3 <= MAX_SEARCH_LOCATION_BYTES) return null
  if (json.length <= MAX_SEARCH_LOCATION_BYTES && Buffer.byteLength(json, 'utf8') <= MAX_SEARCH_LOCATION_BYTES) return null
  return { loc, msg: MESSAGE, type: 'invalid' }
}
