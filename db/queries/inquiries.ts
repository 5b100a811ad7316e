/**
 * Contact-form inquiries (contract §4.2). Everything here runs inside the caller's transaction:
 * the contact (found or created), the inquiry row and, when outreach applies, the delivery row
 * commit together, so a delivery never exists without its inquiry nor the reverse.
 */
import { and, eq, sql } from 'drizzle-orm'
import type { Db } from '../client'
import { contacts, leadInquiries } from '../schema'
import { hasEnabledOutreachEndpoint, insertOutreachDelivery } from './outreach'
import { findProperty } from './properties'
import { newDeliveryId, type DeliveryBody } from '../../shared/outreach/delivery'

export interface NewContactValues {
  type: 'demandante' | 'propietario'
  name: string
  email: string | null
  phone: string | null
  source: string | null
  operation: 'venta' | 'alquiler' | 'traspaso' | null
  propertyTypes: string[]
  rating: number | null
  urgency: 'baja-urgencia' | 'media-urgencia' | 'alta-urgencia' | null
  budgetMax: number | null
  minBedrooms: number | null
  notes: string
}

export interface InquiryValues {
  contact: NewContactValues
  propertyId: number | null
  message: string
  source: string | null
  sourcePage: string | null
  outreach: boolean
}

export interface CreatedInquiry {
  inquiryId: number
  leadId: number
  leadCreated: boolean
  outreach: 'queued' | 'skipped' | 'not_configured'
  /** Set when a delivery row was written: the caller enqueues its job after commit. */
  deliveryId: string | null
}

/**
 * The contact with this phone (E.164) or email (case-insensitive); a phone match wins when the
 * two identify different contacts. Uses contacts_business_phone_uq and contacts_business_email_uq.
 */
export async function findContactByPhoneOrEmail(db: Db, businessId: number, phone: string | null, email: string | null): Promise<number | null> {
  if (phone !== null) {
    const [row] = await db.select({ id: contacts.id }).from(contacts).where(and(eq(contacts.businessId, businessId), eq(contacts.phone, phone)))
    if (row) return row.id
  }
  if (email !== null) {
    const [row] = await db
      .select({ id: contacts.id })
      .from(contacts)
      .where(and(eq(contacts.businessId, businessId), sql`lower(${contacts.email}) = lower(${email})`, sql`${contacts.email} is not null`))
    if (row) return row.id
  }
  return null
}

/**
 * Finds the person's contact or creates it. Two concurrent inquiries from one new person both
 * miss the look-up; the insert's ON CONFLICT DO NOTHING (any of the unique indexes) lets one
 * win, the other waits for it to commit, inserts nothing and then reads the winner's row.
 */
export async function findOrCreateContact(db: Db, businessId: number, values: NewContactValues): Promise<{ id: number; created: boolean }> {
  for (let round = 0; round < 3; round++) {
    const existing = await findContactByPhoneOrEmail(db, businessId, values.phone, values.email)
    if (existing !== null) return { id: existing, created: false }
    const inserted = await db
      .insert(contacts)
      .values({ businessId, ...values })
      .onConflictDoNothing()
      .returning({ id: contacts.id })
    if (inserted.length) return { id: inserted[0].id, created: true }
    // The conflicting row may have been deleted between the insert and the next look-up: loop.
  }
  throw new Error('contact look-up did not settle after 3 rounds')
}

export async function isPropertyOfBusiness(db: Db, businessId: number, propertyId: number): Promise<boolean> {
  return (await findProperty(db, businessId, propertyId)) !== null
}

export async function createInquiry(db: Db, businessId: number, v: InquiryValues): Promise<CreatedInquiry> {
  const lead = await findOrCreateContact(db, businessId, v.contact)
  const [inquiry] = await db
    .insert(leadInquiries)
    .values({
      businessId,
      contactId: lead.id,
      propertyId: v.propertyId,
      contactName: v.contact.name,
      contactEmail: v.contact.email,
      contactPhone: v.contact.phone,
      message: v.message,
      source: v.source,
      sourcePage: v.sourcePage,
    })
    .returning({ id: leadInquiries.id, createdAt: leadInquiries.createdAt })

  const base = { inquiryId: inquiry.id, leadId: lead.id, leadCreated: lead.created }
  if (!v.outreach) return { ...base, outreach: 'skipped', deliveryId: null }
  if (!(await hasEnabledOutreachEndpoint(db, businessId))) return { ...base, outreach: 'not_configured', deliveryId: null }

  const deliveryId = newDeliveryId()
  const payload: DeliveryBody = {
    type: 'inquiry.created',
    delivery_id: deliveryId,
    created_at: inquiry.createdAt.toISOString(),
    inquiry_id: inquiry.id,
    lead_id: lead.id,
    lead_created: lead.created,
    property_id: v.propertyId,
    contact: { name: v.contact.name, email: v.contact.email, phone: v.contact.phone },
    message: v.message,
    source: v.source,
    source_page: v.sourcePage,
  }
  await insertOutreachDelivery(db, { id: deliveryId, businessId, inquiryId: inquiry.id, payload, createdAt: inquiry.createdAt })
  return { ...base, outreach: 'queued', deliveryId }
}
