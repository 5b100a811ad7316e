/**
 * What the lead routes, the inquiry route and the lead-ingest worker call (contract §4, §4.1,
 * §4.2). Duplicate phones and emails are decided by the unique indexes (db/queries/contacts.ts),
 * never by a look-up first, so the rule holds across API and worker replicas.
 */
import type { Db } from '../../db/client'
import { findContact, insertContact, insertIngestContacts, listContacts, updateContact, type WriteResult } from '../../db/queries/contacts'
import { findOrCreateContact, insertInquiry, isPropertyOfBusiness, listInquiriesOfContact, type InquiryListRow } from '../../db/queries/inquiries'
import { hasEnabledOutreachEndpoint, insertOutreachDelivery } from '../../db/queries/outreach'
import { newDeliveryId, type DeliveryBody } from '../outreach/delivery'
import { recordEvent, recordEvents } from '../events/record'
import { AppError, fieldError, notFound } from '../platform/errors'
import { readFor } from '../platform/read-replica'
import type { Services } from '../platform/services'
import { dedupeIngestLeads, type IngestLead } from './ingest'
import type { InquiryValues } from './inquiry-input'
import { leadInputToColumns } from './lead-input'
import { leadView } from './lead-view'
import { contactListQuery } from './list-query'
import type { InquiryListParams, InquiryView, LeadCreate, LeadListParams, LeadUpdate, LeadView, OutreachOutcome } from './schemas'

/**
 * The rental-ingest row of a landing-form payload, or its 422/500 refusal, before the answer
 * (api-spec §4.11). On the hot path, so synchronous and with no I/O.
 */
export { buildIngestLead as prepareIngestLead } from './ingest'

const leadNotFound = () => notFound('Lead')

/** contract §4, §6: 409 `Duplicate contact` naming the contact that holds the phone or email. */
const duplicateContact = (existingId: number) => new AppError('duplicate_contact', 'Duplicate contact', { extra: { existing_id: existingId } })

function writtenId(result: WriteResult): number {
  if (result === null) throw leadNotFound()
  if ('duplicateOf' in result) throw duplicateContact(result.duplicateOf)
  return result.id
}

export interface LeadPage {
  leads: LeadView[]
  /** Total matching across all pages. */
  count: number
  limit: number
  offset: number
}

/** A list read: may run on the read replica (docs/operations.md "Read replica"). */
export async function listLeads(deps: Pick<Services, 'database' | 'reads'>, businessId: number, query: LeadListParams): Promise<LeadPage> {
  const q = contactListQuery(businessId, query)
  const { rows, count } = await readFor(deps, businessId, (database) => listContacts(database.db, q))
  return { leads: rows.map(leadView), count, limit: q.limit, offset: q.offset }
}

/**
 * Runs in the caller's transaction: POST /leads wraps it in `idempotent()`, so a 422 or 409 is
 * stored with the Idempotency-Key like an answer. Returns the new lead's id.
 */
export async function createLead(tx: Db, businessId: number, body: LeadCreate): Promise<number> {
  // lead.created goes to the outbox from the contacts trigger, in the insert's statement (migration 0028).
  const written = await insertContact(tx, businessId, leadInputToColumns(body))
  if ('duplicateOf' in written) throw duplicateContact(written.duplicateOf)
  return written.row.id
}

/** lead.updated's `previous_attributes`: the fields whose value changed (updated_at, which always moves, aside). */
function changedAttributes(before: LeadView, after: LeadView): Record<string, unknown> {
  const previous: Record<string, unknown> = {}
  for (const key of Object.keys(after) as (keyof LeadView)[]) {
    if (key !== 'updated_at' && JSON.stringify(before[key]) !== JSON.stringify(after[key])) previous[key] = before[key]
  }
  return previous
}

export async function getLead(deps: Pick<Services, 'database'>, businessId: number, leadId: number): Promise<LeadView> {
  const row = await findContact(deps.database.db, businessId, leadId)
  if (!row) throw leadNotFound()
  return leadView(row)
}

/** Only the supplied fields change (`null` clears); 404 for a missing or foreign id alike. */
export async function updateLead(deps: Pick<Services, 'database'>, businessId: number, leadId: number, body: LeadUpdate): Promise<number> {
  const columns = leadInputToColumns(body)
  return deps.database.db.transaction(async (tx) => {
    const before = await findContact(tx, businessId, leadId)
    if (!before) throw leadNotFound()
    const id = writtenId(await updateContact(tx, businessId, leadId, columns))
    // Written in this transaction, so it is there.
    const written = await findContact(tx, businessId, id)
    if (!written) throw new Error(`lead ${id} is missing right after its update`)
    const after = leadView(written)
    const previous = changedAttributes(leadView(before), after)
    // contract §10.1: lead.updated when the PATCH changed something.
    if (Object.keys(previous).length) await recordEvents(tx, businessId, [{ type: 'lead.updated', object: after, previousAttributes: previous }])
    return id
  })
}

/**
 * An inquiry's `outreach` now (contract §9.4): its delivery's state when one was made (pending is
 * still `queued`), else what the create answered; inquiries stored before that answer was kept
 * and without a delivery read `not_configured`.
 */
export function inquiryOutreach(row: Pick<InquiryListRow, 'outreach' | 'deliveryState'>): InquiryView['outreach'] {
  if (row.deliveryState !== null) return row.deliveryState === 'pending' ? 'queued' : row.deliveryState
  return row.outreach === 'skipped' ? 'skipped' : 'not_configured'
}

export interface InquiryPage {
  inquiries: InquiryView[]
  count: number
  limit: number
  offset: number
}

/** GET /leads/{id}/inquiries: the lead's inquiries newest first; 404 for a missing or foreign lead. */
export async function listLeadInquiries(deps: Pick<Services, 'database'>, businessId: number, leadId: number, query: InquiryListParams): Promise<InquiryPage> {
  const { db } = deps.database
  if (!(await findContact(db, businessId, leadId))) throw leadNotFound()
  const limit = query.limit ?? 100
  const offset = query.offset ?? 0
  const { rows, count } = await listInquiriesOfContact(db, leadId, { limit, offset })
  return {
    count,
    limit,
    offset,
    inquiries: rows.map((r) => ({
      id: r.id,
      lead_id: r.leadId,
      property_id: r.propertyId,
      message: r.message,
      source: r.source,
      source_page: r.sourcePage,
      outreach: inquiryOutreach(r),
      created_at: r.createdAt.toISOString(),
    })),
  }
}

/**
 * Inserts one micro-batch of accepted rental leads (the lead-ingest worker, and the API when
 * Redis cannot take the batch). The first lead of a (business, phone) wins within the batch;
 * later and earlier duplicates create and update nothing. Returns the (business, phone) of each
 * lead created.
 */
export function storeIngestBatch(deps: Pick<Services, 'database'>, leads: IngestLead[]): Promise<{ businessId: number; phone: string }[]> {
  const unique = dedupeIngestLeads(leads)
  // One lead.created per stored lead (contract §10.1), appended by the contacts trigger as each
  // row is inserted (migration 0028): a duplicate stores nothing and records nothing.
  return insertIngestContacts(deps.database.db, unique)
}

export interface CreatedInquiry {
  inquiryId: number
  leadId: number
  leadCreated: boolean
  outreach: OutreachOutcome
  /** Set when a delivery row was written: enqueue it after commit (queueOutreachDelivery). */
  deliveryId: string | null
}

/**
 * Runs in the caller's transaction, so the contact, the inquiry and the delivery commit
 * together. The found contact is never modified (contract §4.2).
 */
export async function createInquiry(tx: Db, businessId: number, values: InquiryValues): Promise<CreatedInquiry> {
  // A property of another business is reported like a missing one (api-spec §5.5), as a 422 on
  // the field: the resource addressed by the path (the inquiry) is not what is missing.
  if (values.propertyId !== null && !(await isPropertyOfBusiness(tx, businessId, values.propertyId))) {
    throw fieldError(['body', 'property_id'], 'No property with this id in this business', 'not_found')
  }
  const lead = await findOrCreateContact(tx, businessId, values.contact)
  // Decided before the insert so the inquiry keeps it (GET /leads/{id}/inquiries, contract §9.4).
  const outreach: OutreachOutcome = !values.outreach ? 'skipped' : (await hasEnabledOutreachEndpoint(tx, businessId)) ? 'queued' : 'not_configured'
  const inquiry = await insertInquiry(tx, {
    businessId,
    contactId: lead.id,
    propertyId: values.propertyId,
    contactName: values.contact.name,
    contactEmail: values.contact.email,
    contactPhone: values.contact.phone,
    message: values.message,
    source: values.source,
    sourcePage: values.sourcePage,
    outreach,
  })

  const base = { inquiryId: inquiry.id, leadId: lead.id, leadCreated: lead.created }
  // The inquiry as the outreach delivery carries it (contract §8), without the delivery's own fields.
  const described = {
    created_at: inquiry.createdAt.toISOString(),
    inquiry_id: inquiry.id,
    lead_id: lead.id,
    lead_created: lead.created,
    property_id: values.propertyId,
    contact: { name: values.contact.name, email: values.contact.email, phone: values.contact.phone },
    message: values.message,
    source: values.source,
    source_page: values.sourcePage,
  }
  let created: CreatedInquiry
  if (outreach !== 'queued') created = { ...base, outreach, deliveryId: null }
  else {
    const deliveryId = newDeliveryId()
    const payload: DeliveryBody = { type: 'inquiry.created', delivery_id: deliveryId, ...described }
    await insertOutreachDelivery(tx, { id: deliveryId, businessId, inquiryId: inquiry.id, payload, createdAt: inquiry.createdAt })
    created = { ...base, outreach: 'queued', deliveryId }
  }
  // A lead created here recorded its lead.created at its insert (the contacts trigger), before this.
  await recordEvent(tx, businessId, { type: 'inquiry.created', object: { id: inquiry.id, ...described } })
  return created
}

/**
 * Queues a committed delivery for the `outreach` worker. A failed enqueue is logged, not
 * thrown: the delivery is `pending` in PostgreSQL and the worker's sweep (worker/maintenance.ts)
 * queues it later, so the inquiry's answer stands.
 */
export async function queueOutreachDelivery(deps: Pick<Services, 'queues' | 'logger'>, deliveryId: string): Promise<void> {
  try {
    await deps.queues.enqueue('outreach', { deliveryId })
  } catch (error) {
    deps.logger.warn('outreach enqueue failed; the maintenance sweep will queue it', { delivery_id: deliveryId, error: (error as Error).message })
  }
}

/** Data-subject rights (contract §13): shared/leads/erasure.ts. */
export { cleanUpErasedLead, eraseLead, exportLead } from './erasure'
