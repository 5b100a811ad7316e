/**
 * `POST /leads/inquiries` (api-spec §4.12, contract §4.2): a contact-form inquiry attached to the
 * person's contact (found by phone or email, else created from `contact` + `lead`), and — when
 * the business has an enabled outreach endpoint — a delivery recorded in the same transaction
 * and queued for the `outreach` worker after commit. If the enqueue fails the delivery is still
 * `pending` in PostgreSQL and the worker's sweep (worker/maintenance.ts) queues it later.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { idempotent } from '../../shared/platform/idempotency'
import { authPlugin } from '../plugins/auth'
import { IdempotencyKeyHeader } from '../../shared/platform/schemas'
import { createInquiry, isPropertyOfBusiness } from '../../db/queries/inquiries'
import { fieldError } from '../../shared/platform/errors'
import { inquiryValuesOf } from '../../shared/leads/inquiry-input'
import { LeadInquiryRequest, LeadInquiryResponse, type LeadInquiryAnswer } from '../../shared/leads/inquiry-schemas'

export const inquiryRoutes = (deps: AppDeps) => {
  const { db } = deps.database
  return new Elysia({ name: 'routes.inquiries', prefix: '/v1', detail: { tags: ['Leads'] } })
    .use(authPlugin)
    .post(
      '/leads/inquiries',
      async ({ auth, body, headers, set }) => {
        const values = inquiryValuesOf(body)
        let deliveryId: string | null = null
        const result = await idempotent<LeadInquiryAnswer>(db, { apiKeyId: auth.apiKeyId, operation: 'createLeadInquiry', key: headers['idempotency-key'], body }, async (tx) => {
          // A property of another business is reported like a missing one (api-spec §5.5), as a
          // 422 on the field: the resource addressed by the path (the inquiry) is not what is missing.
          if (values.propertyId !== null && !(await isPropertyOfBusiness(tx, auth.business.id, values.propertyId))) {
            throw fieldError(['body', 'property_id'], 'No property with this id in this business', 'not_found')
          }
          const created = await createInquiry(tx, auth.business.id, values)
          deliveryId = created.deliveryId
          return {
            status: 200,
            body: {
              status: 'ok' as const,
              inquiry_id: created.inquiryId,
              lead_id: created.leadId,
              lead_created: created.leadCreated,
              outreach: created.outreach,
              authenticated_as: auth.business.name,
            },
          }
        })
        if (deliveryId !== null) {
          const id: string = deliveryId
          try {
            await deps.queues.enqueue('outreach', { deliveryId: id })
          } catch (error) {
            // Committed already: the sweep re-enqueues pending deliveries without a job.
            deps.logger.warn('outreach enqueue failed; the maintenance sweep will queue it', { delivery_id: id, error: (error as Error).message })
          }
        }
        if (result.replayed) set.headers['idempotent-replayed'] = 'true'
        set.status = result.status
        return result.body
      },
      {
        operation: 'createLeadInquiry',
        headers: IdempotencyKeyHeader,
        body: LeadInquiryRequest,
        response: { 200: LeadInquiryResponse },
        detail: {
          
          summary: 'Create a contact-form inquiry',
          description:
            'Attaches the inquiry to the contact with the same phone (E.164) or email (case-insensitive) — that contact is not modified (`lead_created: false`) — or creates a contact from `contact` and `lead` (`lead_created: true`). ' +
            'When `outreach` is not false and the business has an enabled outreach endpoint, the inquiry is delivered to it by the `outreach` worker as a signed webhook (`outreach: "queued"`); see docs/outreach.md. ' +
            'With `Idempotency-Key`, a retry within 24 h returns the original answer with `Idempotent-Replayed: true` and creates nothing.',
        },
      },
    )
}
