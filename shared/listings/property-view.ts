/**
 * The public representation of a property (api-spec §2.1–2.2, contract §3.4) as one plain
 * function of the private row and its ready images and videos. The catalogue stores its output as `doc`;
 * `catalogueFilterColumns` derives the filter columns from the same inputs so the two never
 * disagree (e.g. the geography point is rounded exactly like `lat`/`lon`).
 */
import type { Static } from '@sinclair/typebox'
import type { CatalogueFilterColumns, ReadyImageRow } from '../../db/queries/catalogue/rebuild'
import type { PropertyRow } from '../../db/schema'
import { OPERATIONS, type PropertyArea, type PropertyCharacteristics, type PropertyLocation, type PropertyView } from './schemas'
import { sanitizeDescription } from './description-html'
import { subtypeLabel, type PropertyType } from './subtypes'

export type AddressPrivacy = 'public' | 'approximate' | 'hidden'

/** The `location` and `area` inputs as stored (validated by the creation schema). */
export type StoredLocation = Static<typeof PropertyLocation>
export type StoredArea = Static<typeof PropertyArea>

/** The columns of a `properties` row the public view reads. */
export type PrivatePropertyRow = Pick<
  PropertyRow,
  | 'id'
  | 'operations'
  | 'type'
  | 'subtype'
  | 'title'
  | 'description'
  | 'priceSale'
  | 'priceRent'
  | 'priceTransfer'
  | 'location'
  | 'area'
  | 'bedrooms'
  | 'bathrooms'
  | 'characteristics'
  | 'features'
  | 'isFeatured'
  | 'status'
  | 'createdAt'
  | 'updatedAt'
>

/**
 * A `property_videos` row in state `ready` (contract §9.3): a link (url, embed_url, YouTube's
 * thumbnail) or a transcoded upload (MP4 url, hls_url, poster thumbnail). Never the original.
 */
export interface ReadyVideo {
  id: string
  title: string
  position: number
  url: string | null
  hlsUrl: string | null
  thumbnailUrl: string | null
  embedUrl: string | null
}

/** Public `videos[]` (contract §9.3): ready videos in order, fields that do not apply omitted. */
export function publicVideos(videos: readonly ReadyVideo[]): PropertyView['videos'] {
  return [...videos]
    .sort((a, b) => a.position - b.position)
    .map((v, i) => ({
      id: v.id,
      title: v.title,
      order: i + 1,
      ...(v.url !== null ? { url: v.url } : {}),
      ...(v.hlsUrl !== null ? { hls_url: v.hlsUrl } : {}),
      ...(v.thumbnailUrl !== null ? { thumbnail_url: v.thumbnailUrl } : {}),
      ...(v.embedUrl !== null ? { embed_url: v.embedUrl } : {}),
    }))
}

type Translations = NonNullable<Static<typeof PropertyCharacteristics>['translations']>

/** Each language's description sanitised as the base one (contract §15 §3 `description`); titles are text and stay. */
function publicTranslations(translations: Translations): Translations {
  const out: Translations = {}
  for (const [lang, text] of Object.entries(translations) as [keyof Translations, Translations[keyof Translations]][]) {
    if (!text) continue
    out[lang] = text.description === undefined ? text : { ...text, description: sanitizeDescription(text.description) }
  }
  return out
}

/** The public representation (api-spec §2.1), as its schema says. */
export type PublicProperty = PropertyView

export const DEFAULT_COUNTRY = 'España'
export const DEFAULT_PRIVACY: AddressPrivacy = 'approximate'

/** 2 decimals ≈ 1 km (api-spec §8). */
export const roundCoord = (x: number) => Math.round(x * 100) / 100

export function joinOperations(ops: readonly string[]): string {
  return OPERATIONS.filter((o) => ops.includes(o)).join(',')
}

export function privacyOf(location: StoredLocation): AddressPrivacy {
  return location.visibility ?? DEFAULT_PRIVACY
}

// The approximate address (contract §3.4, §15) is built from parts, never by deleting text from
// the full address: the street name, then postal code and city. Without a `street` field the
// street is read from `address` (or `full_address`): the first comma-separated part that still
// names something once cut before its house number, with no word of the building name or of
// the number left in it. Words are compared folded (case and accents ignored), whole words only.

const fold = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()
/** The letter/digit pieces of a word (`Sol-Mar,` → sol, mar). */
const pieces = (word: string) =>
  fold(word)
    .split(/[^\p{L}\p{N}º]+/u)
    .filter(Boolean)

/** Articles and prepositions: shared by every name, so never a sign of the building or number. */
const PARTICLES = new Set([
  'a',
  'al',
  'd',
  'da',
  'das',
  'de',
  'del',
  'dels',
  'do',
  'e',
  'el',
  'els',
  'en',
  'es',
  'i',
  'l',
  'la',
  'las',
  'les',
  'lo',
  'los',
  'o',
  's',
  'sa',
  'y',
])
/** A word that starts the number part: the street name ends before it. */
const NUMBER_MARKERS = new Set(['n', 'nº', 'no', 'num', 'numero', 'nro', 'nr', 'sn', 's/n', 'º'])
const NUMBER_WORDS = new Set(
  (
    'un uno una dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince dieciseis diecisiete dieciocho diecinueve ' +
    'veinte veintiun veintiuno veintiuna veintidos veintitres veinticuatro veinticinco veintiseis veintisiete veintiocho veintinueve ' +
    'treinta cuarenta cincuenta sesenta setenta ochenta noventa cien ciento doscientos trescientos cuatrocientos quinientos seiscientos ' +
    'setecientos ochocientos novecientos mil ' +
    'primer primero primera segundo segunda tercer tercero tercera cuarto cuarta quinto quinta sexto sexta septimo septima octavo octava ' +
    'noveno novena decimo decima'
  ).split(' '),
)
/** Words that may follow a number (floor, door, letter): part of it when they trail a number word. */
const NUMBER_TAIL = new Set(
  (
    'y bis dup duplicado piso planta puerta pta bajo bajos izq izda izquierda dcha der derecha esc escalera portal bloque blq ' +
    'entlo entresuelo principal pral atico letra'
  ).split(' '),
)
const isNumberish = (p: string) => NUMBER_WORDS.has(p) || NUMBER_TAIL.has(p) || NUMBER_MARKERS.has(p) || /^\p{L}$/u.test(p)

const wordsOf = (text: string | undefined) => new Set((text ? pieces(text) : []).filter((p) => !PARTICLES.has(p)))

/** The street name in `text`: cut before its house number, without the forbidden words. */
function streetName(text: string, forbidden: Set<string>): string {
  const digit = text.search(/\d/)
  let words = (digit === -1 ? text : text.slice(0, digit)).split(/\s+/).filter(Boolean)
  const marker = words.findIndex(
    (w) => NUMBER_MARKERS.has(fold(w).replace(/[.:]+$/, '')) || (pieces(w).length > 0 && pieces(w).every((p) => NUMBER_MARKERS.has(p))),
  )
  if (marker !== -1) words = words.slice(0, marker)
  words = words.filter((w) => !pieces(w).some((p) => forbidden.has(p)))
  // A number written in words trails the name ("Calle Mayor tres B"); inside a name it stays ("Plaza del Dos de Mayo").
  const tail = words.findIndex((w, i) => i > 0 && pieces(w).some((p) => NUMBER_WORDS.has(p)) && words.slice(i).every((x) => pieces(x).every(isNumberish)))
  if (tail !== -1) words = words.slice(0, tail)
  while (words.length && pieces(words[words.length - 1]).every((p) => PARTICLES.has(p))) words.pop()
  return words.join(' ')
}

/** The street name without house number or building name, or undefined when the location has no street part. */
export function approximateStreet(location: StoredLocation): string | undefined {
  const source = location.street ?? location.address ?? location.full_address
  if (source === undefined) return undefined
  const forbidden = new Set([...wordsOf(location.building_name), ...wordsOf(location.number)])
  const area = new Set(
    [location.city, location.province, location.country, location.postal_code].filter((x): x is string => !!x).map((x) => pieces(x).join(' ')),
  )
  for (const part of source.split(/[,;]/)) {
    const street = streetName(part.trim(), forbidden)
    if (street && !area.has(pieces(street).join(' '))) return street
  }
  return ''
}

/** contract §15 §3.4: the street name (no number, no building), then postal code and city. */
export function approximateAddress(location: StoredLocation): string | undefined {
  const street = approximateStreet(location)
  if (street === undefined) return undefined
  const area = [location.postal_code, location.city].filter(Boolean).join(' ')
  return [street, area].filter(Boolean).join(', ')
}

/** The full address shown when public: as given, else the street and number. */
export function publicAddress(location: StoredLocation): string | undefined {
  return location.full_address ?? location.address ?? (location.street ? [location.street, location.number].filter(Boolean).join(' ') : undefined)
}

/**
 * A public coordinate as the catalogue indexes it: under 1e-9° (0.1 mm) from 0 it is 0. The
 * catalogue's GiST multiplies the widths of boxes around the points it holds, and two points a
 * few 1e-300° apart made that product underflow: PostgreSQL then refused every insert descending
 * into that part of the index ("value out of range: underflow", a 500 on publish for any
 * business), found by the fuzz test's boundary numbers. From 1e-9 on, two different coordinates
 * are at least ~1e-25 apart, and such widths cannot underflow.
 */
export const indexableCoord = (x: number) => (Math.abs(x) < 1e-9 ? 0 : x)

/** The published point: exact when public (see indexableCoord), rounded when approximate, none when hidden or unknown. */
export function publishedPoint(location: StoredLocation): { lat: number; lon: number } | null {
  const c = location.coordinates
  const privacy = privacyOf(location)
  if (!c || privacy === 'hidden') return null
  return privacy === 'public'
    ? { lat: indexableCoord(c.latitude), lon: indexableCoord(c.longitude) }
    : { lat: roundCoord(c.latitude), lon: roundCoord(c.longitude) }
}

/** The public representation of a property: its fields, then where it is as far as its visibility allows. */
export function toPublicProperty(row: PrivatePropertyRow, images: readonly ReadyImageRow[], videos: readonly ReadyVideo[] = []): PublicProperty {
  const location = row.location as StoredLocation
  const area = row.area as StoredArea
  const out: PublicProperty = {
    id: row.id,
    operation: joinOperations(row.operations),
    type: row.type as PropertyType,
    subtype: subtypeLabel(row.type, row.subtype),
    title: row.title,
    price: row.priceSale,
    size_total: area.total,
    bedrooms: row.bedrooms,
    bathrooms: row.bathrooms,
    // Portals insert it into their pages: only the allow-list of contract §15 is published.
    description: sanitizeDescription(row.description),
    images: publicImages(images),
    videos: publicVideos(videos),
    specs: publicSpecs(row, location, area),
    features: ((row.features ?? []) as { key: string; label: string; value: string | number | boolean; isextra?: boolean }[]).map((f) => ({
      key: f.key,
      label: f.label,
      value: f.value,
      isextra: f.isextra ?? false,
    })),
    status: row.status,
    city: location.city,
    country: location.country ?? DEFAULT_COUNTRY,
    is_featured: row.isFeatured,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
  return Object.assign(out, publicPlace(location))
}

/** Ready images in position order, numbered from 1. */
function publicImages(images: readonly ReadyImageRow[]): PropertyView['images'] {
  return [...images]
    .sort((a, b) => a.position - b.position)
    .map((img, i) => ({ id: img.id, url: img.publicUrl, order: i + 1, is_primary: img.isPrimary, title: img.title }))
}

/** `specs`: the characteristics, the area beyond its total, the address privacy, the building (when public) and the other prices. */
function publicSpecs(row: PrivatePropertyRow, location: StoredLocation, area: StoredArea): PropertyView['specs'] {
  const privacy = privacyOf(location)
  // jsonb written only from a validated PropertyCharacteristics (contract §3.1).
  const characteristics = (row.characteristics ?? {}) as Static<typeof PropertyCharacteristics>
  const priceCalc: { price_alq?: number; price_trasp?: number } = {}
  if (row.priceRent !== null) priceCalc.price_alq = row.priceRent
  if (row.priceTransfer !== null) priceCalc.price_trasp = row.priceTransfer
  // Key order as published since 1.0: characteristics, area extras, privacy, building, prices.
  return {
    ...characteristics,
    ...(characteristics.translations ? { translations: publicTranslations(characteristics.translations) } : {}),
    ...(area.usable !== undefined ? { usable_area: area.usable } : {}),
    ...(area.built !== undefined ? { size_built: area.built } : {}),
    ...(area.plot !== undefined ? { plot_size: area.plot } : {}),
    address_privacy: privacy,
    ...(privacy === 'public' && location.building_name ? { building_name: location.building_name } : {}),
    price_calc: priceCalc,
  }
}

/** The province, and unless the location is hidden its postal code, address and point (exact or approximate). */
function publicPlace(location: StoredLocation): Pick<PropertyView, 'province' | 'postal_code' | 'address' | 'lat' | 'lon'> {
  const place: Pick<PropertyView, 'province' | 'postal_code' | 'address' | 'lat' | 'lon'> = {}
  if (location.province !== undefined) place.province = location.province
  const privacy = privacyOf(location)
  if (privacy === 'hidden') return place
  if (location.postal_code !== undefined) place.postal_code = location.postal_code
  const address = privacy === 'public' ? publicAddress(location) : approximateAddress(location)
  if (address !== undefined) place.address = address
  const point = publishedPoint(location)
  if (point) {
    place.lat = point.lat
    place.lon = point.lon
  }
  return place
}

/** rental_kind column: what `rental_type` filters on (api-spec §4.3). */
export function rentalKind(row: Pick<PrivatePropertyRow, 'operations' | 'characteristics'>): 'temporal' | 'vacacional' | 'anual' | null {
  const c = (row.characteristics ?? {}) as Record<string, unknown>
  // Only rentals have a kind: a sale-only listing flagged temporal_renting is no temporary rental.
  if (!row.operations.includes('alquiler')) return null
  if (c.temporal_renting === true) return 'temporal'
  if (c.holiday_renting === true) return 'vacacional'
  return 'anual'
}

/** The point is the doc's lat/lon, so areas match what the client sees (api-spec §4.3 rule 4). */
export function catalogueFilterColumns(row: PrivatePropertyRow): CatalogueFilterColumns {
  const location = row.location as StoredLocation
  return {
    status: row.status,
    operations: OPERATIONS.filter((o) => row.operations.includes(o)),
    type: row.type,
    subtypeKey: row.subtype,
    cityLc: location.city.toLowerCase(),
    priceSale: row.priceSale,
    priceRent: row.priceRent,
    priceTransfer: row.priceTransfer,
    bedrooms: row.bedrooms,
    isFeatured: row.isFeatured,
    rentalKind: rentalKind(row),
    point: publishedPoint(location),
  }
}
