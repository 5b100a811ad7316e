/**
 * The table of public operations (api-spec §4, contract §3.3, §5): one row per operationId with
 * its method, path, the scope a key needs and whether it honours `Idempotency-Key`. Routes take
 * their scope and operationId from here (the `operation` macro of api/plugins/auth.ts), the
 * OpenAPI document its scope and header notes, idempotency its operation name, the metrics their
 * route label, and the scope tests their expectations; a test checks the app serves exactly these.
 */
import type { Scope } from './scopes'

export interface OperationSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'OPTIONS'
  /** Elysia's path form (`:param`), under /v1. */
  path: string
  /** 'any': every active key (`GET /me`); 'none': no key at all (a CORS preflight, contract §16.2). */
  scope: Scope | 'any' | 'none'
  /** Honours `Idempotency-Key` (api-spec §8). */
  idempotent: boolean
  /**
   * Called from web pages (contract §16): takes publishable keys from their origins with CORS,
   * form-encoded bodies (`api_key`, `_redirect`, `_gotcha`), and answers their preflight.
   */
  browser?: true
}

export const OPERATIONS = {
  getApiKeyContext: { method: 'GET', path: '/v1/me', scope: 'any', idempotent: false },
  createProperty: { method: 'POST', path: '/v1/properties', scope: 'properties:write', idempotent: true },
  listProperties: { method: 'GET', path: '/v1/properties', scope: 'properties:read', idempotent: false },
  getProperty: { method: 'GET', path: '/v1/properties/:property_id', scope: 'properties:read', idempotent: false },
  updateProperty: { method: 'PATCH', path: '/v1/properties/:property_id', scope: 'properties:write', idempotent: false },
  publishProperty: { method: 'POST', path: '/v1/properties/:property_id/publish', scope: 'properties:write', idempotent: false },
  unpublishProperty: { method: 'POST', path: '/v1/properties/:property_id/unpublish', scope: 'properties:write', idempotent: false },
  createImageUpload: { method: 'POST', path: '/v1/properties/:property_id/images/uploads', scope: 'properties:write', idempotent: true },
  completeImageUpload: { method: 'POST', path: '/v1/properties/:property_id/images/uploads/:upload_id/complete', scope: 'properties:write', idempotent: false },
  getImageUpload: { method: 'GET', path: '/v1/properties/:property_id/images/uploads/:upload_id', scope: 'properties:write', idempotent: false },
  // contract §9: media management, imports and videos; §9.4 reading back and removing a listing.
  getPrivateProperty: { method: 'GET', path: '/v1/properties/:property_id/private', scope: 'properties:write', idempotent: false },
  deleteProperty: { method: 'DELETE', path: '/v1/properties/:property_id', scope: 'properties:write', idempotent: false },
  listImages: { method: 'GET', path: '/v1/properties/:property_id/images', scope: 'properties:write', idempotent: false },
  updateImage: { method: 'PATCH', path: '/v1/properties/:property_id/images/:image_id', scope: 'properties:write', idempotent: false },
  reorderImages: { method: 'PUT', path: '/v1/properties/:property_id/images/order', scope: 'properties:write', idempotent: false },
  deleteImage: { method: 'DELETE', path: '/v1/properties/:property_id/images/:image_id', scope: 'properties:write', idempotent: false },
  importImages: { method: 'POST', path: '/v1/properties/:property_id/images/imports', scope: 'properties:write', idempotent: true },
  createVideoLink: { method: 'POST', path: '/v1/properties/:property_id/videos', scope: 'properties:write', idempotent: true },
  createVideoUpload: { method: 'POST', path: '/v1/properties/:property_id/videos/uploads', scope: 'properties:write', idempotent: true },
  completeVideoUpload: { method: 'POST', path: '/v1/properties/:property_id/videos/:video_id/complete', scope: 'properties:write', idempotent: false },
  listVideos: { method: 'GET', path: '/v1/properties/:property_id/videos', scope: 'properties:write', idempotent: false },
  updateVideo: { method: 'PATCH', path: '/v1/properties/:property_id/videos/:video_id', scope: 'properties:write', idempotent: false },
  reorderVideos: { method: 'PUT', path: '/v1/properties/:property_id/videos/order', scope: 'properties:write', idempotent: false },
  deleteVideo: { method: 'DELETE', path: '/v1/properties/:property_id/videos/:video_id', scope: 'properties:write', idempotent: false },
  listLeadInquiries: { method: 'GET', path: '/v1/leads/:lead_id/inquiries', scope: 'leads:read', idempotent: false },
  listLeads: { method: 'GET', path: '/v1/leads', scope: 'leads:read', idempotent: false },
  createLead: { method: 'POST', path: '/v1/leads', scope: 'leads:write', idempotent: true },
  getLead: { method: 'GET', path: '/v1/leads/:lead_id', scope: 'leads:read', idempotent: false },
  updateLead: { method: 'PATCH', path: '/v1/leads/:lead_id', scope: 'leads:write', idempotent: false },
  ingestRentalLead: { method: 'POST', path: '/v1/leads/ingest', scope: 'leads:ingest', idempotent: false, browser: true },
  createLeadInquiry: { method: 'POST', path: '/v1/leads/inquiries', scope: 'leads:ingest', idempotent: true, browser: true },
  // contract §16.2: the CORS preflights of the two operations pages call; they carry no key.
  preflightRentalLeadIngest: { method: 'OPTIONS', path: '/v1/leads/ingest', scope: 'none', idempotent: false },
  preflightLeadInquiry: { method: 'OPTIONS', path: '/v1/leads/inquiries', scope: 'none', idempotent: false },
  // contract §13: data-subject rights.
  deleteLead: { method: 'DELETE', path: '/v1/leads/:lead_id', scope: 'leads:write', idempotent: false },
  exportLead: { method: 'GET', path: '/v1/leads/:lead_id/export', scope: 'leads:read', idempotent: false },
  // contract §10.1: any key may list events; each sees only the types its scopes can read.
  listEvents: { method: 'GET', path: '/v1/events', scope: 'any', idempotent: false },
  getEvent: { method: 'GET', path: '/v1/events/:event_id', scope: 'any', idempotent: false },
  redeliverEvent: { method: 'POST', path: '/v1/events/:event_id/redeliver', scope: 'webhooks:write', idempotent: false },
  // contract §10.2. Creating an endpoint does not honour Idempotency-Key: its answer carries the
  // signing secret, which would then be kept in plain text for 24 h to replay it (docs/events.md).
  createWebhookEndpoint: { method: 'POST', path: '/v1/webhook_endpoints', scope: 'webhooks:write', idempotent: false },
  listWebhookEndpoints: { method: 'GET', path: '/v1/webhook_endpoints', scope: 'webhooks:write', idempotent: false },
  getWebhookEndpoint: { method: 'GET', path: '/v1/webhook_endpoints/:endpoint_id', scope: 'webhooks:write', idempotent: false },
  updateWebhookEndpoint: { method: 'PATCH', path: '/v1/webhook_endpoints/:endpoint_id', scope: 'webhooks:write', idempotent: false },
  deleteWebhookEndpoint: { method: 'DELETE', path: '/v1/webhook_endpoints/:endpoint_id', scope: 'webhooks:write', idempotent: false },
  listWebhookDeliveries: { method: 'GET', path: '/v1/webhook_endpoints/:endpoint_id/deliveries', scope: 'webhooks:write', idempotent: false },
  rotateWebhookSecret: { method: 'POST', path: '/v1/webhook_endpoints/:endpoint_id/rotate_secret', scope: 'webhooks:write', idempotent: false },
} as const satisfies Record<string, OperationSpec>

export type OperationId = keyof typeof OPERATIONS

export const operationSpec = (id: OperationId): OperationSpec => OPERATIONS[id]

/** The paths of the operations pages call (contract §16): CORS and form bodies apply there only. */
export const BROWSER_PATHS: ReadonlySet<string> = new Set(
  Object.values<OperationSpec>(OPERATIONS)
    .filter((op) => op.browser)
    .map((op) => op.path),
)
