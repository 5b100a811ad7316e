/**
 * Businesses and their API keys, as operators manage them (`cli business`, `cli key`; contract
 * §1). A key's secret leaves here once, in `createApiKey`'s answer; only its hash is stored.
 */
import { insertKey, listKeys, revokeKey } from '../../db/queries/api-keys'
import { createBusiness as insertBusiness, findBusiness } from '../../db/queries/businesses'
import { AppError } from '../platform/errors'
import type { Services } from '../platform/services'
import { generateApiKey } from './api-key-format'
import type { ApiKeySummary, Business, CreatedApiKey } from './schemas'
import type { Scope } from './scopes'

type AccessDeps = Pick<Services, 'database'>

export async function createBusiness(deps: AccessDeps, name: string): Promise<Business> {
  const row = await insertBusiness(deps.database.db, name)
  return { id: row.id, name: row.name }
}

/** For operations that act on a business an operator names: an unknown id is a not_found. */
export async function requireBusiness(deps: AccessDeps, businessId: number): Promise<void> {
  if (!(await findBusiness(deps.database.db, businessId))) throw new AppError('not_found', `business ${businessId} does not exist`)
}

export interface NewApiKey {
  businessId: number
  scopes: Scope[]
  name: string | null
  expiresAt: Date | null
}

export async function createApiKey(deps: AccessDeps, input: NewApiKey): Promise<CreatedApiKey> {
  await requireBusiness(deps, input.businessId)
  const key = generateApiKey()
  await insertKey(deps.database.db, {
    businessId: input.businessId, keyId: key.keyId, secretHash: key.secretHash, name: input.name, scopes: input.scopes, expiresAt: input.expiresAt,
  })
  return { business_id: input.businessId, key_id: key.keyId, api_key: key.apiKey, scopes: input.scopes, expires_at: input.expiresAt?.toISOString() ?? null }
}

/**
 * Revoking twice is not an error (the first revocation stands). The key store's cache makes
 * every API replica refuse the key within 1 s (contract §1).
 */
export async function revokeApiKey(deps: AccessDeps, keyId: string): Promise<void> {
  if (!(await revokeKey(deps.database.db, keyId))) throw new AppError('not_found', `key ${keyId} does not exist`)
}

/** Every key of the business, oldest first, without secrets or their hashes. */
export async function listApiKeys(deps: AccessDeps, businessId: number): Promise<ApiKeySummary[]> {
  return (await listKeys(deps.database.db, businessId)).map((k) => ({
    key_id: k.keyId,
    name: k.name,
    // Only parseScopes' output is ever stored (createApiKey).
    scopes: k.scopes as Scope[],
    created_at: k.createdAt.toISOString(),
    expires_at: k.expiresAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
  }))
}
