/**
 * Contact-form inquiries (contract §4.2). Meant to run inside the caller's transaction: the
 * contact (found or created), the inquiry row and, when outreach applies, the delivery row
 * (./outreach.ts) commit together, so a delivery never exists without its inquiry nor the reverse.
 */
import { and, eq, sql } from 'drizzle-orm'
import type { Db } from '../client'
import { contacts, leadInquiries } from '../schema'
import { findProperty } from './properties'

type ContactInsert = typeof contacts.$inferInsert

/** Every column of a contact created for an inquiry, explicit. */
export type NewInquiryContact = Required<
  Pick<
    ContactInsert,
    'type' | 'name' | 'email' | 'phone' | 'source' | 'operation' | 'propertyTypes' | 'rating' | 'urgency' | 'budgetMax' | 'minBedrooms' | 'notes'
  >
>

export type NewInquiry = Required<Omit<typeof leadInquiries.$inferInsert, 'id' | 'createdAt'>>

/**
 * The contact with this phone (E.164) or email (case-insensitive); a phone match wins when the
 * two identify different contacts. Uses contacts_business_phone_uq and contacts_business_email_uq.
 */
export async function findContactByPhoneOrEmail(db: Db, businessId: number, phone: string | null, email: string | null): Promise<number | null> {
  if (phone !== null) {
    const [row] = await db
      .select({ id: contacts.id })
      .from(contacts)
      .where(and(eq(contacts.businessId, businessId), eq(contacts.phone, phone)))
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
export async function findOrCreateContact(db: Db, businessId: number, values: NewInquiryContact): Promise<{ id: number; created: boolean }> {
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

/** created_at is the transaction's time; the outreach delivery carries the same instant. */
export async function insertInquiry(db: Db, values: NewInquiry): Promise<{ id: number; createdAt: Date }> {
  const [row] = await db.insert(leadInquiries).values(values).returning({ id: leadInquiries.id, createdAt: leadInquiries.createdAt })
  return row
}

export interface InquiryWithOutreach {
  id: number
  leadId: number
  propertyId: number | null
  contactName: string
  contactEmail: string | null
  contactPhone: string | null
  message: string
  source: string | null
  sourcePage: string | null
  createdAt: Date
  /** The state of the inquiry's outreach delivery; null when none was made. */
  deliveryState: string | null
  /** The answer's `outreach` as stored (null on inquiries stored before it was). */
  answeredOutreach: string | null
}

/** A lead's inquiries, newest first, each with its outreach delivery's state (the export, contract §13). */
export async function inquiriesOfContactWithOutreach(db: Db, contactId: number): Promise<InquiryWithOutreach[]> {
  const rows = await db.execute<{
    id: number
    contact_id: number
    property_id: number | null
    contact_name: string
    contact_email: string | null
    contact_phone: string | null
    message: string
    source: string | null
    source_page: string | null
    created_at: string | Date
    delivery_state: string | null
    outreach: string | null
  }>(sql`
    select i.id, i.contact_id, i.property_id, i.contact_name, i.contact_email, i.contact_phone, i.message, i.source, i.source_page, i.created_at, i.outreach,
           (select d.state from outreach_deliveries d where d.inquiry_id = i.id order by d.created_at desc limit 1) as delivery_state
    from lead_inquiries i where i.contact_id = ${contactId}
    order by i.created_at desc, i.id desc`)
  return [...rows].map((r) => ({
    id: r.id,
    leadId: r.contact_id,
    propertyId: r.property_id,
    contactName: r.contact_name,
    contactEmail: r.contact_email,
    contactPhone: r.contact_phone,
    message: r.message,
    source: r.source,
    sourcePage: r.source_page,
    createdAt: new Date(r.created_at),
    deliveryState: r.delivery_state,
    answeredOutreach: r.outreach,
  }))
}

export interface InquiryListRow {
  id: number
  leadId: number
  propertyId: number | null
  message: string
  source: string | null
  sourcePage: string | null
  /** What the create answered (null: stored before it was kept). */
  outreach: 'queued' | 'skipped' | 'not_configured' | null
  /** The inquiry's outreach delivery, when one was made. */
  deliveryState: 'pending' | 'delivered' | 'failed' | 'skipped' | null
  createdAt: Date
}

/**
 * One page of a contact's inquiries, newest first (GET /leads/{id}/inquiries, contract §9.4), and
 * how many there are. Uses lead_inquiries_contact_idx; each delivery by outreach_deliveries_inquiry_idx.
 */
export async function listInquiriesOfContact(
  db: Db,
  contactId: number,
  page: { limit: number; offset: number },
): Promise<{ rows: InquiryListRow[]; count: number }> {
  const rows = await db.execute<{
    id: number
    contact_id: number
    property_id: number | null
    message: string
    source: string | null
    source_page: string | null
    outreach: InquiryListRow['outreach']
    delivery_state: InquiryListRow['deliveryState']
    created_at: string | Date
  }>(sql`
    select i.id, i.contact_id, i.property_id, i.message, i.source, i.source_page, i.outreach, i.created_at,
           (select d.state from outreach_deliveries d where d.inquiry_id = i.id order by d.created_at desc limit 1) as delivery_state
    from lead_inquiries i where i.contact_id = ${contactId}
    order by i.created_at desc, i.id desc
    limit ${page.limit} offset ${page.offset}`)
  const [{ total }] = await db.execute<{ total: number }>(sql`select count(*)::int as total from lead_inquiries where contact_id = ${contactId}`)
  return {
    count: total,
    rows: [...rows].map((r) => ({
      id: r.id,
      leadId: r.contact_id,
      propertyId: r.property_id,
      message: r.message,
      source: r.source,
      sourcePage: r.source_page,
      outreach: r.outreach,
      deliveryState: r.delivery_state,
      createdAt: new Date(r.created_at),
    })),
  }
}
