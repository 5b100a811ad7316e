/**
 * ISO 8601 instants for query filters (`updated_since`, contract §4): a date (`2026-11-01`, the
 * start of that day in UTC) or a date-time with optional seconds, fraction and offset; a time
 * without offset is UTC, so the answer never depends on the server's time zone. Impossible
 * dates (`2026-02-30`, hour 24) are refused instead of rolling over.
 */
const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|([+-])(\d{2})(?::?(\d{2}))?)?)?$/

export function parseIsoInstant(text: string): Date | null {
  const m = ISO_RE.exec(text.trim())
  if (!m) return null
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone, sign, oh = '0', om = '0'] = m
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number)
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59 || Number(oh) > 23 || Number(om) > 59) return null
  const ms = Date.UTC(year, month - 1, day, hour, minute, second, Number(frac.padEnd(3, '0').slice(0, 3)))
  const check = new Date(ms)
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return null
  const offsetMin = zone && sign ? (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) : 0
  return new Date(ms - offsetMin * 60_000)
}
