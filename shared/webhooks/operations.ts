/**
 * Webhook endpoints (contract §10.2, §15): what the routes and `cli webhooks` call. Secrets are
 * made here, shown once (create, rotate) and stored only sealed with APP_SECRET.
 */
import * as queries from '../../db/queries/webhooks'
import type { WebhookEndpointRow } from '../../db/queries/webhooks'
import type { Scope } from '../access/scopes'
import { getEvent } from '../events/operations'
import type { EventTypePattern } from '../events/schemas'
import { canRead, eventScopesOf, unreadablePatterns } from '../events/visibility'
import { AppError, fieldError, notFound } from '../platform/errors'
import { checkUrl, FetchError, type ResolveHost } from '../platform/fetch'
import { sealSecret } from '../platform/secret-box'
import type { Services } from '../platform/services'
import { webhookSecretContext } from './delivery'
import {
  MAX_ENDPOINTS_PER_BUSINESS,
  type WebhookAttemptView,
  type WebhookEndpointCreate,
  type WebhookEndpointUpdate,
  type WebhookEndpointView,
} from './schemas'
import { generateWebhookSecret } from './signature'
import { wakeEndpoints } from './wake'

/** contract §10.2: after a rotation the old secret keeps signing for 24 h. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000
/** How long checking a URL at create/PATCH may take (resolving its host). */
const URL_CHECK_TIMEOUT_MS = 5000

type Auth = { businessId: number; scopes: readonly Scope[] }
type Deps = Pick<Services, 'config' | 'database'>

const endpointNotFound = () => notFound('Webhook endpoint')

export function endpointView(row: WebhookEndpointRow): WebhookEndpointView {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    enabled_events: row.enabledEvents,
    status: row.status,
    disabled_reason: row.status === 'disabled' ? (row.disabledReason ?? 'disabled') : null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/**
 * contract §15: a URL the request-forgery guard refuses is a 422 on `url`, the host name
 * resolved now (every delivery checks again).
 */
async function checkEndpointUrl(deps: Deps, url: string, resolve?: ResolveHost): Promise<string> {
  try {
    return (await checkUrl(url, { allowHosts: deps.config.webhooks.allowHosts, timeoutMs: URL_CHECK_TIMEOUT_MS, resolve })).href
  } catch (error) {
    if (!(error instanceof FetchError)) throw error
    const msg = {
      bad_url: 'Must be an absolute http or https URL',
      url_not_allowed: 'The host is, or resolves to, a loopback, private or otherwise non-public address',
      connection_failed: 'The host name does not resolve',
      timeout: 'The host name did not resolve in time',
      too_large: 'The URL is not allowed',
      too_many_redirects: 'The URL is not allowed',
    }[error.code]
    throw fieldError(['body', 'url'], msg, error.code)
  }
}

function checkEventsReadable(patterns: readonly EventTypePattern[], scopes: readonly Scope[]): void {
  const refused = unreadablePatterns(patterns, scopes)
  if (refused.length) {
    throw fieldError(
      ['body', 'enabled_events'],
      `This key cannot read ${refused.map((p) => `"${p}"`).join(', ')} (lead.* and inquiry.* need leads:read; property.*, image.* ` +
        `and video.* need properties:read, and property.created, property.updated, image.* and video.* also properties:write)`,
      'forbidden_type',
    )
  }
}

export async function createWebhookEndpoint(
  deps: Deps,
  auth: Auth,
  body: WebhookEndpointCreate,
  options: { resolve?: ResolveHost } = {},
): Promise<WebhookEndpointView & { secret: string }> {
  checkEventsReadable(body.enabled_events, auth.scopes)
  const url = await checkEndpointUrl(deps, body.url, options.resolve)
  const secret = generateWebhookSecret()
  const row = await deps.database.db.transaction(async (tx) => {
    // Serialises creates of one business, so the bound holds under concurrent requests.
    await queries.lockBusinessEndpoints(tx, auth.businessId)
    if ((await queries.countEndpoints(tx, auth.businessId)) >= MAX_ENDPOINTS_PER_BUSINESS) {
      throw new AppError('conflict', `A business may have at most ${MAX_ENDPOINTS_PER_BUSINESS} webhook endpoints; delete one first`)
    }
    return queries.insertEndpoint(tx, {
      businessId: auth.businessId,
      url,
      description: body.description ?? null,
      enabledEvents: body.enabled_events,
      // contract §15: a wildcard is sent only what this key can read.
      eventScopes: eventScopesOf(auth.scopes),
      secretSealed: sealSecret(deps.config.appSecret, secret, webhookSecretContext(auth.businessId)),
    })
  })
  return { ...endpointView(row), secret }
}

export async function listWebhookEndpoints(deps: Pick<Services, 'database'>, businessId: number): Promise<WebhookEndpointView[]> {
  return (await queries.listEndpoints(deps.database.db, businessId)).map(endpointView)
}

export async function getWebhookEndpoint(deps: Pick<Services, 'database'>, businessId: number, endpointId: number): Promise<WebhookEndpointView> {
  const row = await queries.findEndpoint(deps.database.db, businessId, endpointId)
  if (!row) throw endpointNotFound()
  return endpointView(row)
}

export async function updateWebhookEndpoint(
  deps: Deps,
  auth: Auth,
  endpointId: number,
  patch: WebhookEndpointUpdate,
  options: { resolve?: ResolveHost } = {},
): Promise<WebhookEndpointView> {
  if (patch.enabled_events) checkEventsReadable(patch.enabled_events, auth.scopes)
  const url = patch.url === undefined ? undefined : await checkEndpointUrl(deps, patch.url, options.resolve)
  return deps.database.db.transaction(async (tx) => {
    const row = await queries.findEndpoint(tx, auth.businessId, endpointId, { forUpdate: true })
    if (!row) throw endpointNotFound()
    const set: Parameters<typeof queries.updateEndpoint>[2] = {}
    if (url !== undefined) set.url = url
    // The key that chooses the subscription bounds it (contract §15); a key that only moves the
    // URL narrows it to what it can read too, so a partner key can never redirect to itself
    // what only the owner's key may read.
    if (patch.enabled_events !== undefined) set.enabledEvents = patch.enabled_events
    if (patch.enabled_events !== undefined) set.eventScopes = eventScopesOf(auth.scopes)
    else if (url !== undefined) set.eventScopes = eventScopesOf(auth.scopes).filter((scope) => row.eventScopes.includes(scope))
    if (patch.description !== undefined) set.description = patch.description
    if (patch.status === 'enabled' && row.status !== 'enabled') Object.assign(set, { status: 'enabled', disabledReason: null, failingSince: null })
    if (patch.status === 'disabled' && row.status !== 'disabled') {
      Object.assign(set, { status: 'disabled', disabledReason: 'disabled by a PATCH request' })
      await queries.cancelPendingDeliveriesOfEndpoint(tx, endpointId)
    }
    return endpointView(await queries.updateEndpoint(tx, endpointId, set))
  })
}

export async function deleteWebhookEndpoint(deps: Pick<Services, 'database'>, businessId: number, endpointId: number): Promise<void> {
  if (!(await queries.deleteEndpoint(deps.database.db, businessId, endpointId))) throw endpointNotFound()
}

/** A new secret; the current one keeps signing beside it for 24 h (two signatures per delivery). */
export async function rotateWebhookSecret(deps: Deps, businessId: number, endpointId: number): Promise<{ secret: string; previousSecretExpiresAt: string }> {
  const secret = generateWebhookSecret()
  const row = await deps.database.db.transaction(async (tx) => {
    const current = await queries.findEndpoint(tx, businessId, endpointId, { forUpdate: true })
    if (!current) throw endpointNotFound()
    return queries.rotateEndpointSecret(
      tx,
      endpointId,
      sealSecret(deps.config.appSecret, secret, webhookSecretContext(businessId)),
      current.secretSealed,
      ROTATION_OVERLAP_MS,
    )
  })
  // The rotation itself sets it (now + ROTATION_OVERLAP_MS).
  if (!row.previousSecretExpiresAt) throw new Error('rotateEndpointSecret returned no expiry for the previous secret')
  return { secret, previousSecretExpiresAt: row.previousSecretExpiresAt.toISOString() }
}

export async function listWebhookAttempts(
  deps: Pick<Services, 'database'>,
  businessId: number,
  endpointId: number,
  limit: number,
): Promise<WebhookAttemptView[]> {
  if (!(await queries.findEndpoint(deps.database.db, businessId, endpointId))) throw endpointNotFound()
  return (await queries.listAttempts(deps.database.db, endpointId, limit)).map((a) => ({
    id: a.id,
    delivery_id: a.deliveryId,
    event_id: a.eventId,
    event_type: a.eventType,
    attempt: a.attempt,
    status_code: a.statusCode,
    error: a.error,
    latency_ms: a.latencyMs,
    delivered_at: a.attemptedAt.toISOString(),
  }))
}

/**
 * contract §15: a further attempt of the same delivery (attempt numbers continue), queued now.
 * 404 for an event the key cannot see or an endpoint of another business; 422 for an event the
 * endpoint may not be sent (its subscription was set up by a key that cannot read that type);
 * 409 for a disabled endpoint (enable it first).
 */
export async function redeliverEvent(
  deps: Pick<Services, 'database' | 'queues' | 'logger'>,
  auth: Auth,
  eventId: string,
  endpointId: number,
): Promise<{ deliveryId: string }> {
  const event = await getEvent(deps, auth, eventId)
  const endpoint = await queries.findEndpoint(deps.database.db, auth.businessId, endpointId)
  if (!endpoint) throw endpointNotFound()
  if (!canRead(event.type, endpoint.eventScopes)) {
    throw fieldError(
      ['body', 'endpoint_id'],
      `This endpoint is not sent ${event.type} events: the key that set up its subscription cannot read them`,
      'forbidden_type',
    )
  }
  if (endpoint.status !== 'enabled') throw new AppError('conflict', 'The webhook endpoint is disabled; enable it (PATCH status "enabled") before redelivering')
  const deliveryId = await queries.reopenDelivery(deps.database.db, auth.businessId, endpointId, eventId)
  // Redis down: the delivery is due in PostgreSQL and the relay's poller wakes its runner.
  await wakeEndpoints(deps, [endpointId]).catch((error) =>
    deps.logger.warn('could not wake a webhook runner; the poller will', { error: (error as Error).message }),
  )
  return { deliveryId }
}

export interface EndpointSummary extends WebhookEndpointView {
  business_id: number
  failing_since: string | null
  deliveries: Record<string, number>
}

/** `cli webhooks list`: every endpoint of the business with its health and delivery counts. */
export async function summariseWebhookEndpoints(deps: Pick<Services, 'database'>, businessId: number): Promise<EndpointSummary[]> {
  const rows = await queries.listEndpoints(deps.database.db, businessId)
  const counts = await queries.deliveryCountsOf(
    deps.database.db,
    rows.map((r) => r.id),
  )
  return rows.map((r) => ({
    ...endpointView(r),
    business_id: r.businessId,
    failing_since: r.failingSince?.toISOString() ?? null,
    deliveries: counts.get(r.id) ?? {},
  }))
}
