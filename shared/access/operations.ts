/**
 * The table of public operations (api-spec §4, contract §3.3, §5): one row per operationId with
 * its method, path, the scope a key needs and whether it honours `Idempotency-Key`. Routes take
 * their scope and operationId from here (the `operation` macro of api/plugins/auth.ts), the
 * OpenAPI document its scope and header notes, idempotency its operation name, the metrics their
 * route label, and the scope tests their expectations; a test checks the app serves exactly these.
 */
import type { Scope } from './scopes'

export interface OperationSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
  /** Elysia's path form (`:param`), under /v1. */
  path: string
  /** 'any': every active key (`GET /me`). */
  scope: Scope | 'any'
  /** Honours `Idempotency-Key` (api-spec §8). */
  idempotent: boolean
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
  listLeads: { method: 'GET', path: '/v1/leads', scope: 'leads:read', idempotent: false },
  createLead: { method: 'POST', path: '/v1/leads', scope: 'leads:write', idempotent: true },
  getLead: { method: 'GET', path: '/v1/leads/:lead_id', scope: 'leads:read', idempotent: false },
  updateLead: { method: 'PATCH', path: '/v1/leads/:lead_id', scope: 'leads:write', idempotent: false },
  ingestRentalLead: { method: 'POST', path: '/v1/leads/ingest', scope: 'leads:ingest', idempotent: false },
  createLeadInquiry: { method: 'POST', path: '/v1/leads/inquiries', scope: 'leads:ingest', idempotent: true },
} as const satisfies Record<string, OperationSpec>

export type OperationId = keyof typeof OPERATIONS

export const operationSpec = (id: OperationId): OperationSpec => OPERATIONS[id]

const byRoute = new Map(Object.entries(OPERATIONS).map(([id, op]) => [`${op.method} ${op.path}`, id as OperationId]))
/** The operation served at this method and (Elysia) route path, if any. */
export const operationAt = (method: string, path: string): OperationId | undefined => byRoute.get(`${method} ${path}`)
