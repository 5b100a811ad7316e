/**
 * Data-subject rights (contract §13): erasing a lead everywhere this service holds the person,
 * and exporting everything held about them.
 *
 * Erasure is one transaction — the contact goes with its inquiries, their outreach deliveries
 * and attempts (cascade); the events about the lead, still in the outbox or published, keep
 * only `{id}`; their pending webhook deliveries are cancelled; the idempotency answers naming
 * the lead are deleted; and `lead.deleted` is recorded — plus a queued clean-up of Redis
 * (`lead-erasure`, retried until done): rental-ingest jobs still waiting or kept failed that
 * carry the person's phone lose that lead. Other queues' jobs carry ids only. The clean-up is
 * queued before the transaction, so a refused enqueue (Redis down) is a 503 with nothing erased;
 * its job holds ids and keyed hashes of the phones, never the values.
 */
import { createHmac } from 'node:crypto'
import type { Job } from 'bullmq'
import { deleteContact, findContact, findContactForUpdate } from '../../db/queries/contacts'
import { eventsAboutLead, scrubEventsAboutLead, scrubOutboxAboutLead } from '../../db/queries/events'
import { deleteAnswersNamingLead } from '../../db/queries/idempotency'
import { inquiriesOfContactWithOutreach } from '../../db/queries/inquiries'
import { outreachDeliveriesOfContact } from '../../db/queries/outreach'
import { cancelPendingDeliveriesOfEvents } from '../../db/queries/webhooks'
import { eventView } from '../events/operations'
import { recordEvents } from '../events/record'
import { notFound } from '../platform/errors'
import type { JobPayload } from '../platform/jobs'
import type { Services } from '../platform/services'
import { asRedisFailure } from '../platform/unavailable'
import { leadView } from './lead-view'
import type { LeadExport } from './schemas'

/** The clean-up runs after the erasure has committed (it would find the same jobs earlier, but not those queued meanwhile). */
const CLEANUP_DELAY_MS = 2000

/** A phone as the clean-up matches it: keyed with APP_SECRET, so the job's data reveals nothing. */
export function phoneFingerprint(appSecret: string, businessId: number, phone: string): string {
  return createHmac('sha256', appSecret).update(`lead-erasure:${businessId}:phone:${phone}`).digest('base64url')
}

export async function eraseLead(deps: Pick<Services, 'config' | 'database' | 'queues'>, businessId: number, leadId: number): Promise<void> {
  const { db } = deps.database
  const before = await findContact(db, businessId, leadId)
  if (!before) throw notFound('Lead')
  const inquiries = await inquiriesOfContactWithOutreach(db, leadId)
  const phones = [...new Set([before.phone, ...inquiries.map((i) => i.contactPhone)].filter((p): p is string => !!p))].slice(0, 4)
  try {
    await deps.queues.enqueue(
      'lead-erasure',
      { businessId, leadId, fingerprints: phones.map((p) => phoneFingerprint(deps.config.appSecret, businessId, p)) },
      { delay: CLEANUP_DELAY_MS },
    )
  } catch (error) {
    throw asRedisFailure(error)
  }
  await db.transaction(async (tx) => {
    if (!(await findContactForUpdate(tx, businessId, leadId))) throw notFound('Lead')
    await scrubOutboxAboutLead(tx, businessId, leadId)
    const eventIds = await scrubEventsAboutLead(tx, businessId, leadId)
    await cancelPendingDeliveriesOfEvents(tx, eventIds)
    await deleteAnswersNamingLead(tx, businessId, leadId)
    await deleteContact(tx, businessId, leadId)
    // contract §10.1: lead.deleted carries the id only.
    await recordEvents(tx, businessId, [{ type: 'lead.deleted', object: { id: leadId } }])
  })
}

/** Rental-ingest job states whose data may still hold the person (active jobs are finishing; they are not rewritten). */
const SCANNED_STATES = ['waiting', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const
const PAGE = 500

/**
 * The `lead-erasure` job: removes the erased person's leads (by phone fingerprint, within the
 * business) from rental-ingest jobs in Redis; a job left with no lead is removed. Idempotent.
 */
export async function cleanUpErasedLead(
  deps: Pick<Services, 'config' | 'queues'>,
  payload: JobPayload<'lead-erasure'>,
): Promise<{ jobsScanned: number; leadsRemoved: number }> {
  const queue = deps.queues.get('lead-ingest')
  const wanted = new Set(payload.fingerprints)
  let jobsScanned = 0
  let leadsRemoved = 0
  if (wanted.size === 0) return { jobsScanned, leadsRemoved }
  for (const state of SCANNED_STATES) {
    for (let start = 0; ; start += PAGE) {
      const jobs: Job[] = await queue.getJobs([state], start, start + PAGE - 1, true)
      for (const job of jobs) {
        if (!job) continue
        jobsScanned++
        const leads = (job.data?.leads ?? []) as { businessId: number; phone: string }[]
        const kept = leads.filter((l) => !(l.businessId === payload.businessId && wanted.has(phoneFingerprint(deps.config.appSecret, l.businessId, l.phone))))
        if (kept.length === leads.length) continue
        leadsRemoved += leads.length - kept.length
        if (kept.length === 0) await job.remove()
        else await job.updateData({ ...job.data, leads: kept })
      }
      if (jobs.length < PAGE) break
    }
  }
  return { jobsScanned, leadsRemoved }
}

/** contract §13, §15: everything held about the lead, as JSON. */
export async function exportLead(deps: Pick<Services, 'database'>, businessId: number, leadId: number): Promise<LeadExport> {
  const { db } = deps.database
  const row = await findContact(db, businessId, leadId)
  if (!row) throw notFound('Lead')
  const [inquiries, deliveries, events] = await Promise.all([
    inquiriesOfContactWithOutreach(db, leadId),
    outreachDeliveriesOfContact(db, leadId),
    eventsAboutLead(db, businessId, leadId),
  ])
  // A delivery's state when one was made, else what the inquiry's answer said (skipped or not_configured).
  const outreachOf = (i: (typeof inquiries)[number]): LeadExport['inquiries'][number]['outreach'] =>
    i.deliveryState === null
      ? i.answeredOutreach === 'skipped'
        ? 'skipped'
        : 'not_configured'
      : i.deliveryState === 'pending'
        ? 'queued'
        : (i.deliveryState as 'delivered' | 'failed' | 'skipped')
  return {
    lead: leadView(row),
    inquiries: inquiries.map((i) => ({
      id: i.id,
      lead_id: i.leadId,
      property_id: i.propertyId,
      message: i.message,
      source: i.source,
      source_page: i.sourcePage,
      outreach: outreachOf(i),
      created_at: i.createdAt.toISOString(),
      contact: { name: i.contactName, email: i.contactEmail, phone: i.contactPhone },
    })),
    outreach_deliveries: deliveries.map((d) => ({ id: d.id, inquiry_id: d.inquiryId, state: d.state, attempts: d.attempts })),
    events: events.map(eventView),
  }
}
