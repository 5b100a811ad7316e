/**
 * Domain rules of property input (contract §3.1–3.2) beyond what the schema checks: each listed
 * operation needs its price, the subtype belongs to the type, feature keys are unique; and the
 * merge of a PATCH into the current record (nested objects merge, `null` clears).
 */
import type { FieldError } from '../platform/errors'
import { isSubtypeOf, type PropertyType } from './subtypes'
import type { StoredArea, StoredLocation } from './property-view'

export interface PropertyInputShape {
  operations: string[]
  type: string
  subtype?: string
  title: string
  description?: string
  pricing: { sale?: number; rent?: number; transfer?: number }
  location: StoredLocation
  area: StoredArea
  bedrooms?: number
  bathrooms?: number
  characteristics?: Record<string, unknown>
  features?: { key: string; label: string; value: string | number | boolean; isextra?: boolean }[]
  owner_id?: number
  is_featured?: boolean
  status?: string
}

export const PRICE_FIELD = { venta: 'sale', alquiler: 'rent', traspaso: 'transfer' } as const

export function propertyRuleErrors(input: PropertyInputShape): FieldError[] {
  const errors: FieldError[] = []
  for (const op of input.operations) {
    const field = PRICE_FIELD[op as keyof typeof PRICE_FIELD]
    if (field && (input.pricing as Record<string, unknown>)[field] === undefined) {
      errors.push({ loc: ['body', 'pricing', field], msg: `Required because operations includes "${op}"`, type: 'missing' })
    }
  }
  if (input.subtype !== undefined && !isSubtypeOf(input.type as PropertyType, input.subtype)) {
    errors.push({ loc: ['body', 'subtype'], msg: `"${input.subtype}" is not a subtype of "${input.type}"`, type: 'invalid' })
  }
  const seen = new Set<string>()
  input.features?.forEach((f, i) => {
    if (seen.has(f.key)) errors.push({ loc: ['body', 'features', i, 'key'], msg: `Duplicate feature key "${f.key}"`, type: 'invalid' })
    seen.add(f.key)
  })
  return errors
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** contract §3.2: objects merge key by key (recursively), `null` removes a key, anything else replaces. */
export function mergePatch<T extends Record<string, unknown>>(current: T, patch: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...current }
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue
    if (value === null) delete out[key]
    else if (isPlainObject(value) && isPlainObject(out[key])) out[key] = mergePatch(out[key] as Record<string, unknown>, value)
    else if (isPlainObject(value)) out[key] = mergePatch({}, value)
    else out[key] = value
  }
  return out as T
}

/** The columns of `properties` a (validated) input writes. */
export function inputToColumns(input: PropertyInputShape) {
  return {
    operations: input.operations,
    type: input.type,
    subtype: input.subtype ?? null,
    title: input.title,
    description: input.description ?? '',
    priceSale: input.pricing.sale ?? null,
    priceRent: input.pricing.rent ?? null,
    priceTransfer: input.pricing.transfer ?? null,
    location: input.location,
    area: input.area,
    bedrooms: input.bedrooms ?? 0,
    bathrooms: input.bathrooms ?? 0,
    characteristics: input.characteristics ?? {},
    features: input.features ?? [],
    ownerId: input.owner_id ?? null,
    isFeatured: input.is_featured ?? false,
    status: input.status ?? 'disponible',
  }
}

/** The stored record seen as a creation input: what a PATCH merges into. */
export function rowToInput(row: {
  operations: string[]; type: string; subtype: string | null; title: string; description: string
  priceSale: number | null; priceRent: number | null; priceTransfer: number | null
  location: unknown; area: unknown; bedrooms: number; bathrooms: number; characteristics: unknown; features: unknown
  ownerId: number | null; isFeatured: boolean; status: string
}): PropertyInputShape {
  const pricing: PropertyInputShape['pricing'] = {}
  if (row.priceSale !== null) pricing.sale = row.priceSale
  if (row.priceRent !== null) pricing.rent = row.priceRent
  if (row.priceTransfer !== null) pricing.transfer = row.priceTransfer
  const input: PropertyInputShape = {
    operations: row.operations,
    type: row.type,
    title: row.title,
    description: row.description,
    pricing,
    location: row.location as StoredLocation,
    area: row.area as StoredArea,
    bedrooms: row.bedrooms,
    bathrooms: row.bathrooms,
    characteristics: row.characteristics as Record<string, unknown>,
    features: row.features as PropertyInputShape['features'],
    is_featured: row.isFeatured,
    status: row.status,
  }
  if (row.subtype !== null) input.subtype = row.subtype
  if (row.ownerId !== null) input.owner_id = row.ownerId
  return input
}
