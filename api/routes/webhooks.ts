/**
 * Webhook endpoints (contract §10.2, §15; scope `webhooks:write`). What each does is in
 * shared/webhooks/operations.ts; deliveries are made by the `webhook-delivery` worker.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import type { Config } from '../../shared/platform/config'
import { authPlugin } from '../plugins/auth'
import { CreatedResponse, idParam, pathIdsToNumbers } from '../../shared/platform/schemas'
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookAttempts,
  listWebhookEndpoints,
  ROTATION_OVERLAP_MS,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from '../../shared/webhooks/operations'
import {
  MAX_ENDPOINTS_PER_BUSINESS,
  RotatedSecretResponse,
  WebhookAttemptListQuery,
  WebhookAttemptListResponse,
  WebhookEndpointCreatedResponse,
  WebhookEndpointCreateRequest,
  WebhookEndpointListResponse,
  WebhookEndpointResponse,
  WebhookEndpointUpdatedResponse,
  WebhookEndpointUpdateRequest,
} from '../../shared/webhooks/schemas'

/** A configured duration as the docs write it: `10 s`, `30 min`, `24 h`, `3 days`. */
function spoken(ms: number): string {
  const [day, hour, minute] = [24 * 3600_000, 3600_000, 60_000]
  if (ms % day === 0 && ms >= 2 * day) return `${ms / day} days`
  if (ms % hour === 0) return `${ms / hour} h`
  if (ms % minute === 0) return `${ms / minute} min`
  return `${ms / 1000} s`
}

/** How deliveries behave, as this deployment is configured (WEBHOOK_TIMEOUT_MS, WEBHOOK_DISABLE_AFTER_MS). */
const deliveryTerms = ({ timeoutMs, disableAfterMs }: Config['webhooks']) =>
  'Each event is POSTed as the Event object of `GET /events`, signed as the Standard Webhooks specification says: ' +
  '`webhook-id` (the event id, the same on every retry), `webhook-timestamp` (unix seconds) and `webhook-signature` ' +
  '(`v1,<base64 HMAC-SHA256>` of `<id>.<timestamp>.<body>` with the base64-decoded part of the secret after `whsec_`). ' +
  `A 2xx within ${spoken(timeoutMs)} is a success; otherwise retries back off exponentially for ${spoken(disableAfterMs)}; ` +
  `a \`410 Gone\` disables the endpoint at once, and so does failing continuously for ${spoken(disableAfterMs)} (\`disabled_reason\` says which). ` +
  'Redirects are not followed. Order is not guaranteed: `sequence` is the order.'

export const webhookRoutes = (deps: AppDeps) =>
  new Elysia({ name: 'routes.webhooks', prefix: '/v1', detail: { tags: ['Webhooks'] } })
    .use(authPlugin)
    .post(
      '/webhook_endpoints',
      async ({ auth, body, set }) => {
        set.status = 201
        return { status: 'ok' as const, data: await createWebhookEndpoint(deps, { businessId: auth.business.id, scopes: auth.scopes }, body) }
      },
      {
        operation: 'createWebhookEndpoint',
        body: WebhookEndpointCreateRequest,
        response: { 201: WebhookEndpointCreatedResponse },
        detail: {
          summary: 'Create a webhook endpoint',
          description:
            'Subscribes the URL to the event types of `enabled_events`. The answer is the only place the signing `secret` is shown. ' +
            `At most ${MAX_ENDPOINTS_PER_BUSINESS} endpoints per business (409). ` +
            'Not idempotent by `Idempotency-Key`: the answer carries the secret, which would have to be stored to be replayed. ' +
            deliveryTerms(deps.config.webhooks),
        },
      },
    )
    .get(
      '/webhook_endpoints',
      async ({ auth }) => ({ status: 'ok' as const, data: await listWebhookEndpoints(deps, auth.business.id), authenticated_as: auth.business.name }),
      {
        operation: 'listWebhookEndpoints',
        response: { 200: WebhookEndpointListResponse },
        detail: { summary: 'List webhook endpoints', description: 'Every endpoint of the business, oldest first, without secrets.' },
      },
    )
    .get(
      '/webhook_endpoints/:endpoint_id',
      async ({ auth, params }) => ({
        status: 'ok' as const,
        data: await getWebhookEndpoint(deps, auth.business.id, params.endpoint_id),
        authenticated_as: auth.business.name,
      }),
      {
        operation: 'getWebhookEndpoint',
        transform: pathIdsToNumbers,
        params: idParam('endpoint_id'),
        response: { 200: WebhookEndpointResponse },
        detail: { summary: 'Retrieve a webhook endpoint', description: 'Without its secret; a disabled endpoint shows `disabled_reason`.' },
      },
    )
    .patch(
      '/webhook_endpoints/:endpoint_id',
      async ({ auth, params, body }) => ({
        status: 'ok' as const,
        data: await updateWebhookEndpoint(deps, { businessId: auth.business.id, scopes: auth.scopes }, params.endpoint_id, body),
      }),
      {
        operation: 'updateWebhookEndpoint',
        transform: pathIdsToNumbers,
        params: idParam('endpoint_id'),
        body: WebhookEndpointUpdateRequest,
        response: { 200: WebhookEndpointUpdatedResponse },
        detail: {
          summary: 'Update a webhook endpoint',
          description:
            'Supplied fields only. A new `url` is checked like at creation (422 on `url`). `status: "disabled"` cancels pending ' +
            'deliveries; `status: "enabled"` re-enables a disabled endpoint (new events only) and clears `disabled_reason`.',
        },
      },
    )
    .delete(
      '/webhook_endpoints/:endpoint_id',
      async ({ auth, params }) => {
        await deleteWebhookEndpoint(deps, auth.business.id, params.endpoint_id)
        return { status: 'ok' as const, id: params.endpoint_id }
      },
      {
        operation: 'deleteWebhookEndpoint',
        transform: pathIdsToNumbers,
        params: idParam('endpoint_id'),
        response: { 200: CreatedResponse },
        detail: { summary: 'Delete a webhook endpoint', description: 'Stops its deliveries at once; its deliveries log goes with it.' },
      },
    )
    .get(
      '/webhook_endpoints/:endpoint_id/deliveries',
      async ({ auth, params, query }) => ({
        status: 'ok' as const,
        data: await listWebhookAttempts(deps, auth.business.id, params.endpoint_id, query.limit ?? 50),
        authenticated_as: auth.business.name,
      }),
      {
        operation: 'listWebhookDeliveries',
        transform(ctx) {
          pathIdsToNumbers(ctx)
          const raw = ctx.query as Record<string, unknown>
          if (typeof raw.limit === 'string' && /^\d{1,16}$/.test(raw.limit)) raw.limit = Number(raw.limit)
        },
        params: idParam('endpoint_id'),
        query: WebhookAttemptListQuery,
        response: { 200: WebhookAttemptListResponse },
        detail: {
          summary: 'List the delivery attempts of a webhook endpoint',
          description:
            'Every attempt, newest first: the event, the attempt number, the status code or the error, the latency, and when it was made (`delivered_at`).',
        },
      },
    )
    .post(
      '/webhook_endpoints/:endpoint_id/rotate_secret',
      async ({ auth, params }) => {
        const rotated = await rotateWebhookSecret(deps, auth.business.id, params.endpoint_id)
        return { status: 'ok' as const, secret: rotated.secret, previous_secret_expires_at: rotated.previousSecretExpiresAt }
      },
      {
        operation: 'rotateWebhookSecret',
        transform: pathIdsToNumbers,
        params: idParam('endpoint_id'),
        response: { 200: RotatedSecretResponse },
        detail: {
          summary: 'Rotate the signing secret',
          description:
            `Returns the new secret (shown only here). For ${spoken(ROTATION_OVERLAP_MS)} every delivery carries two signatures, one with each secret, ` +
            'so the receiver can switch without losing a delivery.',
        },
      },
    )
