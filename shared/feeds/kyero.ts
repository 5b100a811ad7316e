/**
 * One listing as a Kyero v3 `<property>` (contract §12), built from its public representation
 * (the catalogue document), so the feed follows exactly the privacy rules of every other public
 * read. Where Kyero's two published revisions of the v3 schema differ, the stricter rule is
 * followed (ref ≤ 15 characters, `desc`, `features` and `images` always present, no `country`).
 * docs/feeds.md has the mapping table and what the feed does where our data lacks what Kyero requires.
 */
import type { PropertyView } from '../listings/schemas'
import { SUBTYPES, type PropertyType } from '../listings/subtypes'
import { provinceOfPostalCode } from './provinces'
import { element, htmlToText, xmlText } from './xml-text'

export const KYERO_FEED_VERSION = '3'
/** Kyero reads at most 50 images and 50 features per listing. */
const MAX_IMAGES = 50
const MAX_FEATURES = 50

/** Kyero property types: English words only (its schema allows letters, spaces, `&()/-`). */
const TYPE_BY_SUBTYPE: Record<string, string> = {
  piso: 'Apartment',
  atico: 'Penthouse',
  duplex: 'Duplex',
  estudio: 'Studio',
  loft: 'Apartment',
  planta_baja: 'Ground Floor Apartment',
  apartamento: 'Apartment',
  chalet: 'Detached Villa',
  casa_adosada: 'Town House',
  casa_pareada: 'Semi-Detached House',
  villa: 'Villa',
  casa_rustica: 'Country House',
  casa_de_pueblo: 'Village House',
  masia: 'Finca',
  bungalow: 'Bungalow',
  local_comercial: 'Commercial',
  bar_restaurante: 'Restaurant',
  tienda: 'Shop',
  nave_industrial: 'Industrial',
  nave_logistica: 'Warehouse',
  trastero: 'Storage',
  almacen: 'Warehouse',
  oficina: 'Office',
  despacho: 'Office',
  coworking: 'Office',
  urbano: 'Plot',
  urbanizable: 'Land',
  rustico: 'Land',
  plaza_coche: 'Parking',
  plaza_moto: 'Parking',
  garaje_cerrado: 'Garage',
  edificio_residencial: 'Building',
  edificio_oficinas: 'Building',
  hotel: 'Hotel',
}
const TYPE_BY_TYPE: Record<PropertyType, string> = {
  apartamento: 'Apartment',
  casa: 'House',
  local: 'Commercial',
  nave: 'Industrial',
  almacenaje: 'Storage',
  oficina: 'Office',
  terreno: 'Land',
  aparcamiento: 'Parking',
  edificio: 'Building',
}

/** The Kyero type of a listing, from its type and (display-label) subtype. */
export function kyeroType(type: PropertyType, subtypeLabel: string): string {
  const key = Object.entries(SUBTYPES[type] ?? {}).find(([, label]) => label === subtypeLabel)?.[0]
  return (key && TYPE_BY_SUBTYPE[key]) || TYPE_BY_TYPE[type] || 'Property'
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, the only date form Kyero's schema accepts. */
export function kyeroDate(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ')
}

const LANGUAGES = ['ca', 'en', 'fr', 'de', 'pt', 'it'] as const
const RATING_RE = /^[A-G]$/

function featureTexts(doc: PropertyView): string[] {
  const out: string[] = []
  for (const f of doc.features) {
    if (f.value === false) continue
    out.push(f.value === true ? f.label : `${f.label}: ${f.value}`)
  }
  if (doc.specs.elevator === true) out.push('Ascensor')
  const texts = [...new Set(out.map((t) => xmlText(t).trim()).filter(Boolean))]
  // Kyero wants at least one feature; a listing without any is described by its kind.
  if (texts.length === 0) texts.push(xmlText(doc.subtype !== 'Sin Especificar' ? doc.subtype : kyeroType(doc.type, doc.subtype)))
  return texts.slice(0, MAX_FEATURES)
}

/**
 * `<property>…</property>` for a published listing, or null when Kyero cannot list it: only
 * sales and rentals exist there, so a transfer-only listing is left out (contract §15).
 * `lastChange`: when the listing or any of its media last changed (portals re-read on a new `<date>`).
 */
export function kyeroProperty(doc: PropertyView, lastChange: Date): string | null {
  const rent = doc.specs.price_calc?.price_alq
  const [price, freq] = doc.price !== null ? [doc.price, 'sale'] : rent !== undefined ? [rent, 'month'] : [null, null]
  if (price === null) return null

  const parts: string[] = [
    element('id', String(doc.id)),
    element('date', kyeroDate(lastChange)),
    element('ref', String(doc.id)),
    element('price', Math.round(price)),
    element('currency', 'EUR'),
    element('price_freq', freq),
    element('type', kyeroType(doc.type, doc.subtype)),
    element('town', doc.city),
    element('province', doc.province || provinceOfPostalCode(doc.postal_code) || doc.city),
  ]
  // Coordinates exactly as the public representation has them: exact, rounded, or none (hidden).
  if (doc.lat !== undefined && doc.lon !== undefined) parts.push(`<location>${element('latitude', doc.lat)}${element('longitude', doc.lon)}</location>`)
  parts.push(element('beds', doc.bedrooms), element('baths', doc.bathrooms))
  const built = doc.specs.size_built ?? doc.size_total
  const plot = doc.specs.plot_size
  const surface = `${built > 0 ? element('built', Math.round(built)) : ''}${plot !== undefined && plot > 0 ? element('plot', Math.round(plot)) : ''}`
  if (surface) parts.push(`<surface_area>${surface}</surface_area>`)
  const consumption = doc.specs.energy_certificate?.toUpperCase()
  const emissions = doc.specs.emissions?.toUpperCase()
  const consumptionRating = consumption && RATING_RE.test(consumption) ? element('consumption', consumption) : ''
  const emissionsRating = emissions && RATING_RE.test(emissions) ? element('emissions', emissions) : ''
  const rating = consumptionRating + emissionsRating
  if (rating) parts.push(`<energy_rating>${rating}</energy_rating>`)

  const descriptions = [element('es', htmlToText(doc.description) || doc.title)]
  for (const lang of LANGUAGES) {
    const text = doc.specs.translations?.[lang]?.description
    if (text) descriptions.push(element(lang, htmlToText(text)))
  }
  parts.push(`<desc>${descriptions.join('')}</desc>`)
  parts.push(
    `<features>${featureTexts(doc)
      .map((f) => `<feature>${f}</feature>`)
      .join('')}</features>`,
  )
  const images = doc.images
    .filter((img) => /^https?:\/\/.+\.(gif|jpe?g|png)$/i.test(img.url))
    .slice(0, MAX_IMAGES)
    .map((img, i) => `<image id="${i + 1}">${element('url', img.url)}</image>`)
  parts.push(`<images>${images.join('')}</images>`)
  return `<property>${parts.join('')}</property>`
}

export function kyeroHeader(generatedAt: Date): string {
  return (
    `<?xml version="1.0" ` +
    `encoding="UTF-8"?>\n<root><kyero>${element('feed_version', KYERO_FEED_VERSION)}${element('feed_generated', kyeroDate(generatedAt))}</kyero>`
  )
}

export const KYERO_FOOTER = '</root>\n'
