/**
 * Leads (api-spec §4.7–4.11, contract §4, §4.1): contacts CRUD and the rental ingest, over
 * shared/leads/operations.ts. The ingest validates before answering and persists through the
 * micro-batcher (api/ingest-batcher.ts).
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { idempotentAnswer } from '../idempotent-answer'
import { authPlugin } from '../plugins/auth'
import type { AuthContext } from '../../shared/access/key-store'
import { browserFormPlugin, PREFLIGHT_DETAIL, preflightRoute } from '../plugins/browser-form'
import { CreatedResponse, IdempotencyKeyHeader, idParam, pathIdsToNumbers } from '../../shared/platform/schemas'
import { idempotent } from '../../shared/platform/idempotency'
import { createLead, eraseLead, exportLead, getLead, listLeadInquiries, listLeads, prepareIngestLead, updateLead } from '../../shared/leads/operations'
import {
  INGEST_BUDGET_PROBLEM_EXAMPLE,
  INGEST_PHONE_PROBLEM_EXAMPLE,
  InquiryListQuery,
  InquiryListResponse,
  LeadCreateRequest,
  LeadDetailResponse,
  LeadExportResponse,
  LeadListQuery,
  LeadListResponse,
  LeadUpdateRequest,
  RentalIngestRequest,
  RentalIngestResponse,
} from '../../shared/leads/schemas'

const NUMERIC_QUERY = ['limit', 'offset'] as const

export const leadRoutes = (deps: AppDeps) => {
  const { db } = deps.database
  return new Elysia({ name: 'routes.leads', prefix: '/v1', detail: { tags: ['Leads'] } })
    .use(authPlugin)
    .use(browserFormPlugin)
    .get(
      '/leads',
      async ({ auth, query }) => {
        const page = await listLeads(deps, auth.business.id, query)
        return { status: 'ok' as const, data: page.leads, count: page.count, limit: page.limit, offset: page.offset, authenticated_as: auth.business.name }
      },
      {
        operation: 'listLeads',
        // As GET /properties: numbers are converted before validation so a bound violation names
        // the parameter in `loc` (contract §6).
        transform({ query }) {
          const raw = query as Record<string, unknown>
          for (const name of NUMERIC_QUERY) {
            const v = raw[name]
            if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) raw[name] = Number(v)
          }
        },
        query: LeadListQuery,
        response: { 200: LeadListResponse },
        detail: {
          summary: 'List the business contacts',
          description:
            'Newest first (creation time, ties on id descending), with the total `count` across pages. Optional filters combine with ' +
            'AND: `type`, `phone` (normalised to E.164 before comparing), `email` (case-insensitive), `updated_since` (ISO 8601).',
        },
      },
    )
    .post(
      '/leads',
      async ({ auth, body, headers, set }) => {
        const result = await idempotent(db, { apiKeyId: auth.apiKeyId, operation: 'createLead', key: headers['idempotency-key'], body }, async (tx) => {
          const id = await createLead(tx, auth.business.id, body)
          return { status: 201, body: { status: 'ok' as const, id } }
        })
        return idempotentAnswer(set, result)
      },
      {
        operation: 'createLead',
        headers: IdempotencyKeyHeader,
        body: LeadCreateRequest,
        response: { 201: CreatedResponse },
        detail: {
          summary: 'Create a contact',
          description:
            'Creates a CRM contact without initiating outreach. `type` defaults to `demandante`. The phone is normalised to E.164 (no prefix: ' +
            'Spanish); an invalid phone is a 422. A phone or email (case-insensitive) already held by a contact of the business is a 409 `Duplicate ' +
            'contact` with `existing_id`. With `Idempotency-Key`, a retry within 24 h returns the original answer with `Idempotent-Replayed: true`.',
        },
      },
    )
    .get(
      '/leads/:lead_id',
      async ({ auth, params }) => {
        return { status: 'ok' as const, data: await getLead(deps, auth.business.id, params.lead_id), authenticated_as: auth.business.name }
      },
      {
        operation: 'getLead',
        transform: pathIdsToNumbers,
        params: idParam('lead_id'),
        response: { 200: LeadDetailResponse },
        detail: { summary: 'Retrieve a contact', description: '404 `Lead not found` for a missing or foreign id alike.' },
      },
    )
    .patch(
      '/leads/:lead_id',
      async ({ auth, params, body }) => {
        return { status: 'ok' as const, id: await updateLead(deps, auth.business.id, params.lead_id, body) }
      },
      {
        operation: 'updateLead',
        transform: pathIdsToNumbers,
        params: idParam('lead_id'),
        body: LeadUpdateRequest,
        response: { 200: CreatedResponse },
        detail: {
          summary: 'Update a contact',
          description:
            'Only the supplied fields change; `null` clears a nullable field; `updated_at` ' +
            'moves on every update. Same normalisation, 422 and 409 rules as creation.',
        },
      },
    )
    .delete(
      '/leads/:lead_id',
      async ({ auth, params }) => {
        await eraseLead(deps, auth.business.id, params.lead_id)
        return { status: 'ok' as const, id: params.lead_id }
      },
      {
        operation: 'deleteLead',
        transform: pathIdsToNumbers,
        params: idParam('lead_id'),
        response: { 200: CreatedResponse },
        detail: {
          summary: 'Erase a contact (data-subject right)',
          description:
            'Removes the person everywhere this service holds them: the contact, its inquiries (messages and contact data), ' +
            'their outreach deliveries (pending ones cancelled), the personal fields of the stored events about them ' +
            '(each keeps `{id}`; their pending webhook deliveries are cancelled) and the idempotency answers naming them; ' +
            'records `lead.deleted` (`{id}` only). Queued leads of the rental ingest with the same phone are removed from the ' +
            'queue right after. The same phone or email may be created again afterwards. 404 for a missing or foreign id.',
        },
      },
    )
    .get(
      '/leads/:lead_id/export',
      async ({ auth, params }) => ({
        status: 'ok' as const,
        data: await exportLead(deps, auth.business.id, params.lead_id),
        authenticated_as: auth.business.name,
      }),
      {
        operation: 'exportLead',
        transform: pathIdsToNumbers,
        params: idParam('lead_id'),
        response: { 200: LeadExportResponse },
        detail: {
          summary: 'Export everything held about a contact (data-subject right)',
          description:
            'The lead, its inquiries with the contact data they were sent with, their outreach deliveries, and the stored events about them (kept 30 days).',
        },
      },
    )
    .get(
      '/leads/:lead_id/inquiries',
      async ({ auth, params, query }) => {
        const page = await listLeadInquiries(deps, auth.business.id, params.lead_id, query)
        return { status: 'ok' as const, data: page.inquiries, count: page.count, limit: page.limit, offset: page.offset, authenticated_as: auth.business.name }
      },
      {
        operation: 'listLeadInquiries',
        transform(ctx) {
          pathIdsToNumbers(ctx)
          // As GET /leads: numbers converted before validation so a bound violation names the parameter.
          const raw = ctx.query as Record<string, unknown>
          for (const name of NUMERIC_QUERY) {
            const v = raw[name]
            if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) raw[name] = Number(v)
          }
        },
        params: idParam('lead_id'),
        query: InquiryListQuery,
        response: { 200: InquiryListResponse },
        detail: {
          summary: 'List a contact’s inquiries',
          description:
            'The contact-form inquiries attached to the lead, newest first, with the state of their ' +
            'outreach (`queued`, `delivered`, `failed`, `skipped`, `not_configured`). Paged with `limit` ' +
            '(1–1000, default 100) and `offset`; `count` is the total. 404 for a missing or foreign lead.',
        },
      },
    )
    .post(
      '/leads/ingest',
      async ({ auth, body }) => {
        await deps.ingest.submit(prepareIngestLead(auth.business.id, body))
        return { status: 'ok' as const, authenticated_as: auth.business.name }
      },
      {
        operation: 'ingestRentalLead',
        // The honeypot's answer is an accepted ingest's (contract §16.4).
        browserForm: (auth: AuthContext) => ({ status: 'ok' as const, authenticated_as: auth.business.name }),
        body: RentalIngestRequest,
        response: { 200: RentalIngestResponse },
        detail: {
          summary: 'Ingest a rental-seeking lead from a landing form',
          description: [
            'Creates a lead with type `demandante`, operation `alquiler`, property types `apartamento` and ' +
              '`casa`, rating 3, urgency `alta-urgencia`, and a readable summary of the form in the notes.',
            'The primary phone is the first valid number of `areaCode`+`phoneNumber`, `phoneE164`, ' +
              '`phone`, `phoneRaw`; none valid is a 422. A malformed `search.budget` is the documented 500.',
            'The 200 is sent once the lead is durably queued (or, if the queue is unreachable, stored); it is persisted right ' +
              'after. If the business already has a lead with this primary phone nothing is created or updated, and the answer is ' +
              'still 200. No lead id is returned. No `Idempotency-Key`: repeating a submission is harmless (the phone de-duplicates).',
          ].join('\n\n'),
          'x-problem-responses': {
            422: {
              description: 'A field is invalid; with no valid phone in any phone field, `detail` is exactly the message below.',
              example: INGEST_PHONE_PROBLEM_EXAMPLE,
            },
            500: {
              description:
                '`search.budget` is present but is not a whole number or a range of whole numbers (api-spec §4.11 rule 5), or an unexpected server error.',
              example: INGEST_BUDGET_PROBLEM_EXAMPLE,
            },
          },
        } as Record<string, unknown>,
      },
    )
    .options('/leads/ingest', preflightRoute, { preflight: 'preflightRentalLeadIngest', detail: PREFLIGHT_DETAIL })
}
