/**
 * Kyero's v3 feed rules written as checks (the stricter of the two published revisions of its
 * schema where they differ; docs/feeds.md): a parsed feed is checked element by element and every
 * violation is returned as a line naming the listing and the rule.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser'

const DATE_RE = /^(19|20)\d\d-(0[1-9]|1[012])-(0[1-9]|[12]\d|3[01]) ([01]\d|2[0-4]):[0-5]\d:[0-5]\d$/
const TYPE_RE = /^[a-zA-Z&\s()/-]{3,}$/
const IMAGE_URL_RE = /^(https?|ftp):\/\/.*\.(gif|jpe?g|png)$/i
const LANGS = new Set(['ca', 'de', 'da', 'en', 'es', 'fi', 'fr', 'it', 'nl', 'no', 'pt', 'ru', 'sv'])
const PROPERTY_ELEMENTS = new Set([
  'id',
  'date',
  'ref',
  'price',
  'currency',
  'price_freq',
  'part_ownership',
  'leasehold',
  'new_build',
  'type',
  'town',
  'province',
  'location',
  'location_detail',
  'beds',
  'baths',
  'pool',
  'surface_area',
  'energy_rating',
  'url',
  'desc',
  'features',
  'images',
  'notes',
])

export interface ParsedFeed {
  properties: Record<string, any>[]
}

export function parseKyero(xml: string): ParsedFeed {
  const valid = XMLValidator.validate(xml)
  if (valid !== true) throw new Error(`not well-formed XML: ${JSON.stringify(valid.err)}`)
  const doc = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    parseTagValue: false,
    isArray: (name) => ['property', 'image', 'feature'].includes(name),
  }).parse(xml)
  return { properties: doc.root?.property ?? [] }
}

const text = (v: unknown): string => (typeof v === 'object' && v !== null ? String((v as Record<string, unknown>)['#text'] ?? '') : String(v ?? ''))

/** Every rule violation in the feed, as readable lines (empty when the feed follows the rules). */
export function kyeroViolations(xml: string): string[] {
  const problems: string[] = []
  if (!xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')) problems.push('missing XML declaration with UTF-8')
  const doc = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    parseTagValue: false,
    isArray: (name) => ['property', 'image', 'feature'].includes(name),
  }).parse(xml)
  const root = doc.root
  if (!root) return ['no <root>']
  if (text(root.kyero?.feed_version) !== '3') problems.push('kyero/feed_version must be 3')
  if (root.kyero?.feed_generated !== undefined && !DATE_RE.test(text(root.kyero.feed_generated))) problems.push('kyero/feed_generated format')
  for (const p of (root.property ?? []) as Record<string, any>[]) {
    const at = `property ${text(p.id)}`
    const bad = (rule: string) => problems.push(`${at}: ${rule}`)
    for (const key of Object.keys(p)) if (!PROPERTY_ELEMENTS.has(key)) bad(`unknown element <${key}>`)
    const id = text(p.id)
    if (id.length < 1 || id.length > 50) bad('id 1–50 characters')
    if (!DATE_RE.test(text(p.date))) bad('date as YYYY-MM-DD HH:MM:SS')
    const ref = text(p.ref)
    if (ref.length < 1 || ref.length > 15) bad('ref 1–15 characters')
    if (!/^([0-9]+|x)$/.test(text(p.price))) bad('price a whole number')
    if (p.currency !== undefined && !['EUR', 'GBP', 'USD'].includes(text(p.currency))) bad('currency EUR|GBP|USD')
    if (!['sale', 'week', 'month'].includes(text(p.price_freq))) bad('price_freq sale|week|month')
    if (!TYPE_RE.test(text(p.type))) bad(`type "${text(p.type)}" letters only, ≥ 3`)
    if (text(p.town).length < 1) bad('town required')
    if (text(p.province).length < 1) bad('province required')
    if (p.location !== undefined && (!/^-?\d+(\.\d+)?$/.test(text(p.location.latitude)) || !/^-?\d+(\.\d+)?$/.test(text(p.location.longitude))))
      bad('location latitude/longitude decimals')
    if (p.location_detail !== undefined && text(p.location_detail).length > 50) bad('location_detail ≤ 50')
    for (const k of ['beds', 'baths']) if (p[k] !== undefined && !/^\d+$/.test(text(p[k]))) bad(`${k} non-negative integer`)
    if (p.surface_area !== undefined)
      for (const k of ['built', 'plot']) if (p.surface_area[k] !== undefined && !/^-?\d+$/.test(text(p.surface_area[k]))) bad(`surface_area/${k} integer`)
    if (p.energy_rating !== undefined)
      for (const k of ['consumption', 'emissions'])
        if (p.energy_rating[k] !== undefined && !/^[A-GX]$/.test(text(p.energy_rating[k]))) bad(`energy_rating/${k} A–G or X`)
    if (p.desc === undefined) bad('desc required')
    else for (const lang of Object.keys(p.desc)) if (!LANGS.has(lang)) bad(`desc language ${lang}`)
    const features = p.features?.feature as unknown[] | undefined
    if (!features || features.length < 1 || features.length > 50) bad('features: 1–50 <feature>')
    if (p.images === undefined) bad('images required')
    else {
      const images = ((typeof p.images === 'object' ? p.images.image : undefined) ?? []) as Record<string, unknown>[]
      if (images.length > 50) bad('at most 50 images')
      for (const img of images) {
        const n = Number(img['@id'])
        if (!Number.isInteger(n) || n < 0 || n > 100) bad('image id 0–100')
        if (img.url !== undefined && !IMAGE_URL_RE.test(text(img.url))) bad(`image url ${text(img.url)}`)
      }
    }
  }
  return problems
}
