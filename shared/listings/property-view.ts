/**
 * The public representation of a property (api-spec §2.1–2.2, contract §3.4) as one plain
 * function of the private row and its ready images. The catalogue stores its output as `doc`;
 * `catalogueFilterColumns` derives the filter columns from the same inputs so the two never
 * disagree (e.g. the geography point is rounded exactly like `lat`/`lon`).
 */
import type { Static } from '@sinclair/typebox'
import type { CatalogueFilterColumns } from '../../db/queries/catalogue'
import type { PropertyArea, PropertyCharacteristics, PropertyLocation, PropertyView } from './schemas'
import { subtypeLabel, type PropertyType } from './subtypes'

export const OPERATION_ORDER = ['venta', 'alquiler', 'traspaso'] as const
export type AddressPrivacy = 'public' | 'approximate' | 'hidden'

/** The `location` and `area` inputs as stored (validated by the creation schema). */
export type StoredLocation = Static<typeof PropertyLocation>
export type StoredArea = Static<typeof PropertyArea>

/** The columns of a `properties` row this function reads. */
export interface PrivatePropertyRow {
  id: number
  operations: string[]
  type: string
  subtype: string | null
  title: string
  description: string
  priceSale: number | null
  priceRent: number | null
  priceTransfer: number | null
  location: unknown
  area: unknown
  bedrooms: number
  bathrooms: number
  characteristics: unknown
  features: unknown
  isFeatured: boolean
  status: string
  createdAt: Date
  updatedAt: Date
}

/** A `property_images` row in state `ready` with its public URL (never the original key). */
export interface ReadyImage {
  id: string
  publicUrl: string
  position: number
  isPrimary: boolean
  title: string
}

/** The public representation (api-spec §2.1), as its schema says. */
export type PublicProperty = PropertyView

export const DEFAULT_COUNTRY = 'España'
export const DEFAULT_PRIVACY: AddressPrivacy = 'approximate'

/** 2 decimals ≈ 1 km (api-spec §8). */
export const roundCoord = (x: number) => Math.round(x * 100) / 100

export function joinOperations(ops: readonly string[]): string {
  return OPERATION_ORDER.filter((o) => ops.includes(o)).join(',')
}

export function privacyOf(location: StoredLocation): AddressPrivacy {
  return location.visibility ?? DEFAULT_PRIVACY
}

// Tokens that are a house number, floor or door ("12", "3ºB", "s/n", "nº", "bajo"): an
// approximate address keeps the street and area, never where in the street (contract §3.4).
const NUMBER_TOKEN = /^(?:.*\d.*|s\/n|n[º°o.]|núm\.?|num\.?|nº\.?|bajo|bj\.?|pta\.?|puerta|piso|esc\.?|escalera|izq\.?|izda\.?|dcha\.?|der\.?)$/i

/** The address without house number, floor/door or building name. */
export function approximateAddress(location: StoredLocation): string | undefined {
  let text = location.address ?? location.full_address
  if (!text) return undefined
  if (location.building_name) text = text.split(location.building_name).join(' ')
  const parts = text
    .split(',')
    .map((part) => part.trim().split(/\s+/).filter((tok) => tok && !NUMBER_TOKEN.test(tok.replace(/[.,;:()]+$/, ''))).join(' '))
    .filter((part) => part.length > 0)
  return parts.length ? parts.join(', ') : undefined
}

/** The published point: exact when public, rounded when approximate, none when hidden or unknown. */
export function publishedPoint(location: StoredLocation): { lat: number; lon: number } | null {
  const c = location.coordinates
  const privacy = privacyOf(location)
  if (!c || privacy === 'hidden') return null
  return privacy === 'public' ? { lat: c.latitude, lon: c.longitude } : { lat: roundCoord(c.latitude), lon: roundCoord(c.longitude) }
}

export function toPublicProperty(row: PrivatePropertyRow, images: readonly ReadyImage[]): PublicProperty {
  const location = row.location as StoredLocation
  const area = row.area as StoredArea
  const privacy = privacyOf(location)
  // jsonb written only from a validated PropertyCharacteristics (contract §3.1).
  const characteristics = (row.characteristics ?? {}) as Static<typeof PropertyCharacteristics>

  const priceCalc: { price_alq?: number; price_trasp?: number } = {}
  if (row.priceRent !== null) priceCalc.price_alq = row.priceRent
  if (row.priceTransfer !== null) priceCalc.price_trasp = row.priceTransfer

  // Key order as published since 1.0: characteristics, area extras, privacy, building, prices.
  const specs: PropertyView['specs'] = {
    ...characteristics,
    ...(area.usable !== undefined ? { usable_area: area.usable } : {}),
    ...(area.built !== undefined ? { size_built: area.built } : {}),
    ...(area.plot !== undefined ? { plot_size: area.plot } : {}),
    address_privacy: privacy,
    ...(privacy === 'public' && location.building_name ? { building_name: location.building_name } : {}),
    price_calc: priceCalc,
  }

  const sorted = [...images].sort((a, b) => a.position - b.position)
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
    description: row.description,
    images: sorted.map((img, i) => ({ id: img.id, url: img.publicUrl, order: i + 1, is_primary: img.isPrimary, title: img.title })),
    videos: [],
    specs,
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
  if (location.province !== undefined) out.province = location.province
  if (privacy !== 'hidden') {
    if (location.postal_code !== undefined) out.postal_code = location.postal_code
    const address = privacy === 'public' ? (location.full_address ?? location.address) : approximateAddress(location)
    if (address !== undefined) out.address = address
    const point = publishedPoint(location)
    if (point) {
      out.lat = point.lat
      out.lon = point.lon
    }
  }
  return out
}

/** rental_kind column: what `rental_type` filters on (api-spec §4.3). */
export function rentalKind(row: Pick<PrivatePropertyRow, 'operations' | 'characteristics'>): 'temporal' | 'vacacional' | 'anual' | null {
  const c = (row.characteristics ?? {}) as Record<string, unknown>
  // `temporal` is exactly specs.temporal_renting = true; `anual` is a rental that is neither temporal nor holiday.
  if (c.temporal_renting === true) return 'temporal'
  if (!row.operations.includes('alquiler')) return null
  if (c.holiday_renting === true) return 'vacacional'
  return 'anual'
}

/** The point is the doc's lat/lon, so areas match what the client sees (api-spec §4.3 rule 4). */
export function catalogueFilterColumns(row: PrivatePropertyRow): CatalogueFilterColumns {
  const location = row.location as StoredLocation
  return {
    status: row.status,
    operations: OPERATION_ORDER.filter((o) => row.operations.includes(o)),
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
