/**
 * Numbers written in plain decimals (contract §15 §3 prices: no output uses exponent notation).
 * JavaScript writes a number in exponent notation below 1e-6 and from 1e21 (`String(1e-7)` is
 * `1e-7`); prices and budgets are bounded far below 1e21, but a price, an area or a coordinate
 * of 0.0000001 is valid input. Everything this service writes as JSON from JavaScript values (API
 * answers, event data, webhook bodies) and the feed's numbers go through here. What PostgreSQL
 * renders is plain already: the catalogue document and the rendered lead.created pass through
 * jsonb, whose numeric output never uses an exponent.
 */

/** `n` (finite) in plain decimal notation, the same value when read back. */
export function plainNumber(n: number): string {
  const text = String(n)
  const e = text.indexOf('e')
  if (e === -1) return text
  const negative = text.startsWith('-')
  const mantissa = text.slice(negative ? 1 : 0, e)
  const exponent = Number(text.slice(e + 1))
  const point = mantissa.indexOf('.')
  const digits = point === -1 ? mantissa : mantissa.slice(0, point) + mantissa.slice(point + 1)
  // Where the decimal point goes in `digits` once the exponent is applied.
  const at = (point === -1 ? mantissa.length : point) + exponent
  const plain =
    at <= 0 ? `0.${'0'.repeat(-at)}${digits}` : at >= digits.length ? digits + '0'.repeat(at - digits.length) : `${digits.slice(0, at)}.${digits.slice(at)}`
  return negative ? `-${plain}` : plain
}

/** A number in exponent notation as JSON.stringify writes one (`1e-7`, `1.5e+21`): a digit, `e`, a sign. */
const EXPONENT = /\de[-+]/

/**
 * `JSON.stringify(value)` with every number in plain decimals. The text is scanned only when it
 * holds something that looks like an exponent (almost never), and then only outside strings.
 */
export function plainJson(value: unknown): string {
  return plainJsonText(JSON.stringify(value))
}

/** A JSON text as JSON.stringify writes it (indented or not), its numbers rewritten in plain decimals. */
export function plainJsonText(json: string): string {
  if (json === undefined || !EXPONENT.test(json)) return json
  let out = ''
  let from = 0
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i)
    if (c === 34 /* " */) {
      for (i++; i < json.length && json.charCodeAt(i) !== 34; i++) if (json.charCodeAt(i) === 92 /* \ */) i++
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      let end = i + 1
      while (end < json.length && /[0-9.eE+-]/.test(json[end])) end++
      const token = json.slice(i, end)
      if (token.includes('e') || token.includes('E')) {
        out += json.slice(from, i) + plainNumber(Number(token))
        from = end
      }
      i = end - 1
    }
  }
  return out + json.slice(from)
}
