/**
 * Text for XML 1.0 documents: markup characters escaped, and the characters XML 1.0 forbids
 * (C0 controls except tab, line feed and carriage return; lone surrogates; U+FFFE, U+FFFF)
 * dropped, so a document stays well-formed whatever a listing holds (contract §12).
 */
import { plainNumber } from '../platform/plain-json'

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the control characters XML 1.0 forbids, matched to be dropped
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }

export function xmlText(value: string): string {
  return value.replace(FORBIDDEN, '').replace(/[&<>"']/g, (c) => ESCAPES[c])
}

/** `<name>text</name>`, or nothing when the text is empty after cleaning. */
export function element(name: string, value: string | number | null | undefined): string {
  if (value === null || value === undefined) return ''
  // Kyero reads decimals, never `1e-7` (contract §15: no output in exponent notation).
  const text = typeof value === 'number' ? plainNumber(value) : xmlText(value)
  return text === '' ? '' : `<${name}>${text}</${name}>`
}

/** Visible text of an HTML description: tags dropped, block ends as line breaks, entities decoded. */
export function htmlToText(html: string): string {
  return html
    .replace(/<\s*(br|\/p|\/div|\/li|\/h[1-6])\b[^>]*>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(nbsp|amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);/gi, (_, e: string) => {
      const named: Record<string, string> = { nbsp: ' ', amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
      if (named[e.toLowerCase()]) return named[e.toLowerCase()]
      const code = e[1].toLowerCase() === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : ''
    })
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}
