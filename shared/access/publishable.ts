/**
 * The rules of a publishable key's settings (contract §16.1), as pure functions: the origins a
 * browser may use it from and its two rates. The CLI refuses what these refuse before anything is
 * stored; the API compares a request's `Origin` with the stored, canonical forms.
 */

export const MAX_ORIGINS = 20

/** §16.4 defaults. */
export const DEFAULT_RATE_PER_IP = '10/min'
export const DEFAULT_RATE = '600/min'

/** `http://` is for a developer's own machine only; every published page is served over https. */
const HTTP_HOSTS = new Set(['localhost', '127.0.0.1'])

export class SettingError extends Error {
  override name = 'SettingError'
}

/**
 * One origin as a browser sends it in `Origin`: `https://host[:port]` (`http://` only for
 * localhost and 127.0.0.1), nothing else: no path (a trailing `/` included), query, fragment,
 * credentials or wildcard. The answer is the canonical form browsers send (host lower-cased and in
 * punycode, a default port dropped), so the API compares strings exactly.
 */
export function parseOrigin(raw: string): string {
  const text = raw.trim()
  const refuse = (why: string) => new SettingError(`origin "${raw}" ${why}; write it as https://host[:port]`)
  if (text.includes('*')) throw refuse('has a wildcard (each origin is listed whole)')
  if (!URL.canParse(text)) throw refuse('is not a URL')
  const url = new URL(text)
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('is not http(s)')
  if (url.protocol === 'http:' && !HTTP_HOSTS.has(url.hostname)) throw refuse('uses http:// (allowed only for localhost and 127.0.0.1)')
  if (url.username || url.password) throw refuse('has credentials')
  // `new URL('https://a.example')` and `…/` both have the path `/`: only the text tells them apart.
  if (url.pathname !== '/' || /^[a-z]+:\/\/[^/]*\//i.test(text)) throw refuse('has a path')
  if (url.search || text.includes('?')) throw refuse('has a query')
  if (url.hash || text.includes('#')) throw refuse('has a fragment')
  return url.origin
}

/** `a,b,c` → 1–20 distinct canonical origins. */
export function parseOrigins(raw: string): string[] {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (items.length === 0) throw new SettingError('at least one origin is required, e.g. https://landing.example.com')
  const origins = [...new Set(items.map(parseOrigin))]
  if (origins.length > MAX_ORIGINS) throw new SettingError(`at most ${MAX_ORIGINS} origins, got ${origins.length}`)
  return origins
}

export interface Rate {
  /** Requests allowed per window. */
  points: number
  /** The window in seconds. */
  seconds: number
  /** The canonical text, `N/s`, `N/min` or `N/h`. */
  text: string
}

const UNIT_SECONDS: Record<string, number> = { s: 1, min: 60, h: 3600 }
const RATE_RE = /^([1-9]\d{0,8})\/(s|min|h)$/

/** `N/s`, `N/min` or `N/h` with N a whole number from 1 to 999,999,999. */
export function parseRate(raw: string): Rate {
  const m = RATE_RE.exec(raw.trim())
  if (!m) throw new SettingError(`rate "${raw}" must be N/s, N/min or N/h with N a whole number ≥ 1, e.g. 10/min`)
  return { points: Number(m[1]), seconds: UNIT_SECONDS[m[2]], text: `${Number(m[1])}/${m[2]}` }
}
