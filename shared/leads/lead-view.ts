/**
 * The lead object of contract §4 as one plain function of a `contacts` row, used by list and
 * retrieve alike so the two never disagree. Field order follows the contract.
 */
import type { ContactRow } from '../../db/schema/contacts'
import type { PropertyType } from '../listings/subtypes'

export const LEAD_TYPES = ['demandante', 'propietario'] as const
export const LEAD_OPERATIONS = ['venta', 'alquiler', 'traspaso'] as const
export const LEAD_URGENCIES = ['baja-urgencia', 'media-urgencia', 'alta-urgencia'] as const

export type LeadType = (typeof LEAD_TYPES)[number]
export type LeadOperation = (typeof LEAD_OPERATIONS)[number]
export type LeadUrgency = (typeof LEAD_URGENCIES)[number]

export interface LeadView {
  id: number
  type: LeadType
  name: string
  email: string | null
  phone: string | null
  source: string | null
  operation: LeadOperation | null
  property_types: PropertyType[]
  rating: number | null
  urgency: LeadUrgency | null
  budget_max: number | null
  min_bedrooms: number | null
  search_location: Record<string, unknown> | null
  notes: string
  created_at: string
  updated_at: string
}

export function leadView(row: ContactRow): LeadView {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    email: row.email,
    phone: row.phone,
    source: row.source,
    operation: row.operation,
    property_types: row.propertyTypes as PropertyType[],
    rating: row.rating,
    urgency: row.urgency,
    budget_max: row.budgetMax,
    min_bedrooms: row.minBedrooms,
    search_location: (row.searchLocation as Record<string, unknown> | null) ?? null,
    notes: row.notes,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}
