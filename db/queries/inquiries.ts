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
  Pick<ContactInsert, 'type' | 'name' | 'email' | 'phone' | 'source' | 'operation' | 'propertyTypes' | 'rating' | 'urgency' | 'budgetMax' | 'minBedrooms' | 'notes'>
>

export type NewInquiry = Required<Omit<typeof leadInquiries.$inferInsert, 'id' | 'createdAt'>>

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
