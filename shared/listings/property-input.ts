/**
 * Domain rules of property input (contract §3.1–3.2) beyond what the schema checks: each listed
 * operation needs its price, the subtype belongs to the type, feature keys are unique; the merge
 * of a PATCH into the current record (nested objects merge, `null` clears); and the mapping
 * between a validated input and the columns of `properties`.
 */
import type { PropertyColumns } from '../../db/queries/properties'
import type { FieldError } from '../platform/errors'
import type { OPERATIONS, PropertyInput } from './schemas'
import { isSubtypeOf, type PropertyType } from './subtypes'

/** The price each operation needs: one entry per operation (the compiler holds it to OPERATIONS). */
export const PRICE_FIELD = { venta: 'sale', alquiler: 'rent', traspaso: 'transfer' } as const satisfies Record<
  (typeof OPERATIONS)[number],
  keyof PropertyInput['pricing']
>

/** What the rules read. Operations and type are plain strings so a rule never depends on the schema having run first. */
export type RuleInput = Pick<PropertyInput, 'pricing' | 'subtype' | 'features'> & { operations: readonly string[]; type: string }

export function propertyRuleErrors(input: RuleInput): FieldError[] {
  const errors: FieldError[] = []
  for (const op of input.operations) {
    const field = PRICE_FIELD[op as keyof typeof PRICE_FIELD]
    if (field && input.pricing[field] === undefined) {
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

/**
 * contract §3.2: objects merge key by key (recursively), `null` removes a key, anything else
 * replaces. The result is whatever the patch made of `current`: check it against a schema
 * (`Value.Check` narrows it) before using it as a typed record.
 */
export function mergePatch<T extends Record<string, unknown>>(current: T, patch: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...current }
  for (const [key, value] of Object.entries(patch)) {
    const existing = out[key]
    if (value === undefined) continue
    if (value === null) delete out[key]
    else if (isPlainObject(value)) out[key] = mergePatch(isPlainObject(existing) ? existing : {}, value)
    else out[key] = value
  }
  return out
}

/** The columns of `properties` a (validated) input writes. */
export function inputToColumns(input: PropertyInput): PropertyColumns {
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

/**
 * The stored record seen as a creation input: what a PATCH merges into. Its values are as
 * stored; the merge result is checked against the schema, not this.
 */
export function rowToInput(row: PropertyColumns) {
  return {
    operations: row.operations,
    type: row.type,
    title: row.title,
    description: row.description,
    pricing: {
      ...(row.priceSale !== null && { sale: row.priceSale }),
      ...(row.priceRent !== null && { rent: row.priceRent }),
      ...(row.priceTransfer !== null && { transfer: row.priceTransfer }),
    },
    location: row.location,
    area: row.area,
    bedrooms: row.bedrooms,
    bathrooms: row.bathrooms,
    characteristics: row.characteristics,
    features: row.features,
    is_featured: row.isFeatured,
    status: row.status,
    ...(row.subtype !== null && { subtype: row.subtype }),
    ...(row.ownerId !== null && { owner_id: row.ownerId }),
  }
}
