/**
 * The lead object of contract §4 as one plain function of a `contacts` row, used by list and
 * retrieve alike so the two never disagree. Field order follows the contract.
 */
import type { ContactRow } from '../../db/schema/contacts'
import type { PropertyType } from '../listings/subtypes'
import type { LeadView } from './schemas'

export function leadView(row: ContactRow): LeadView {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    email: row.email,
    phone: row.phone,
    source: row.source,
    operation: row.operation,
    // Written only through the lead schemas, whose items are property type keys.
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
