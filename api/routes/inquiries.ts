/**
 * `POST /leads/inquiries` (api-spec §4.12, contract §4.2): a contact-form inquiry attached to the
 * person's contact (found by phone or email, else created from `contact` + `lead`), and — when
 * the business has an enabled outreach endpoint — a delivery recorded in the same transaction
 * and queued for the `outreach` worker after commit. If the enqueue fails the delivery is still
 * `pending` in PostgreSQL and the worker's sweep (worker/maintenance.ts) queues it later.
 */
import { Elysia } from 'elysia'
import { randomInt } from 'node:crypto'
import type { AuthContext } from '../../shared/access/key-store'
import type { AppDeps } from '../deps'
import { idempotentAnswer } from '../idempotent-answer'
import { idempotent } from '../../shared/platform/idempotency'
import { authPlugin } from '../plugins/auth'
import { browserFormPlugin, PREFLIGHT_DETAIL, preflightRoute } from '../plugins/browser-form'
import { IdempotencyKeyHeader } from '../../shared/platform/schemas'
import { inquiryValuesOf } from '../../shared/leads/inquiry-input'
import { createInquiry, queueOutreachDelivery } from '../../shared/leads/operations'
import { LeadInquiryRequest, LeadInquiryResponse, type LeadInquiryAnswer } from '../../shared/leads/schemas'

/** The honeypot's answer looks like an accepted inquiry's; its ids name nothing (contract §16.4). */
function honeypotAnswer(auth: AuthContext, body: { outreach?: boolean } | undefined): LeadInquiryAnswer {
  return {
    status: 'ok',
    inquiry_id: randomInt(1, 2 ** 31 - 1),
    lead_id: randomInt(1, 2 ** 31 - 1),
    lead_created: true,
    outreach: body?.outreach === false ? 'skipped' : 'queued',
    authenticated_as: auth.business.name,
  }
}

export const inquiryRoutes = (deps: AppDeps) => {
  const { db } = deps.database
  return new Elysia({ name: 'routes.inquiries', prefix: '/v1', detail: { tags: ['Leads'] } })
    .use(authPlugin)
    .use(browserFormPlugin)
    .post(
      '/leads/inquiries',
      async ({ auth, body, headers, set }) => {
        // Refused before the key is claimed: a 422 here is not stored as the key's answer.
        const values = inquiryValuesOf(body)
        let deliveryId = null as string | null
        const result = await idempotent<LeadInquiryAnswer>(
          db,
          { apiKeyId: auth.apiKeyId, operation: 'createLeadInquiry', key: headers['idempotency-key'], body },
          async (tx) => {
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
          },
        )
        // After commit: the worker must find the delivery row.
        if (deliveryId !== null) await queueOutreachDelivery(deps, deliveryId)
        return idempotentAnswer(set, result)
      },
      {
        operation: 'createLeadInquiry',
        browserForm: honeypotAnswer,
        headers: IdempotencyKeyHeader,
        body: LeadInquiryRequest,
        response: { 200: LeadInquiryResponse },
        detail: {
          summary: 'Create a contact-form inquiry',
          description:
            'Attaches the inquiry to the contact with the same phone (E.164) or email (case-insensitive) — that contact is ' +
            'not modified (`lead_created: false`) — or creates a contact from `contact` and `lead` (`lead_created: true`). ' +
            'When `outreach` is not false and the business has an enabled outreach endpoint, the inquiry is delivered ' +
            'to it by the `outreach` worker as a signed webhook (`outreach: "queued"`); see docs/outreach.md. ' +
            'With `Idempotency-Key`, a retry within 24 h returns the original answer with `Idempotent-Replayed: true` and creates nothing.',
        },
      },
    )
    .options('/leads/inquiries', preflightRoute, { preflight: 'preflightLeadInquiry', detail: PREFLIGHT_DETAIL })
}
