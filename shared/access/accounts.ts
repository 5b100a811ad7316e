/**
 * Businesses and their API keys, as operators manage them (`cli business`, `cli key`; contract
 * §1, §16.1). A key's secret leaves here once, in `createApiKey`'s answer; only its hash is stored.
 */
import { insertKey, listKeys, revokeKey, setKeyOrigins } from '../../db/queries/api-keys'
import { createBusiness as insertBusiness, findBusiness } from '../../db/queries/businesses'
import { AppError } from '../platform/errors'
import type { Services } from '../platform/services'
import { generateApiKey } from './api-key-format'
import type { ApiKeySummary, Business, CreatedApiKey } from './schemas'
import type { Rate } from './publishable'
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

/** A publishable key (contract §16.1): its scope is always exactly `leads:ingest`. */
export interface NewPublishableKey {
  businessId: number
  origins: string[]
  ratePerIp: Rate
  rate: Rate
  name: string | null
  expiresAt: Date | null
}

export const PUBLISHABLE_SCOPES: Scope[] = ['leads:ingest']

export async function createApiKey(deps: AccessDeps, input: NewApiKey): Promise<CreatedApiKey> {
  await requireBusiness(deps, input.businessId)
  const key = generateApiKey('secret')
  await insertKey(deps.database.db, {
    businessId: input.businessId,
    keyId: key.keyId,
    secretHash: key.secretHash,
    name: input.name,
    scopes: input.scopes,
    expiresAt: input.expiresAt,
  })
  return {
    business_id: input.businessId,
    key_id: key.keyId,
    api_key: key.apiKey,
    kind: 'secret',
    scopes: input.scopes,
    expires_at: input.expiresAt?.toISOString() ?? null,
  }
}

export async function createPublishableKey(deps: AccessDeps, input: NewPublishableKey): Promise<CreatedApiKey> {
  await requireBusiness(deps, input.businessId)
  const key = generateApiKey('publishable')
  await insertKey(deps.database.db, {
    businessId: input.businessId,
    keyId: key.keyId,
    secretHash: key.secretHash,
    name: input.name,
    scopes: PUBLISHABLE_SCOPES,
    expiresAt: input.expiresAt,
    kind: 'publishable',
    origins: input.origins,
    ratePerIp: input.ratePerIp.text,
    rate: input.rate.text,
  })
  return {
    business_id: input.businessId,
    key_id: key.keyId,
    api_key: key.apiKey,
    kind: 'publishable',
    scopes: PUBLISHABLE_SCOPES,
    origins: input.origins,
    rate_per_ip: input.ratePerIp.text,
    rate: input.rate.text,
    expires_at: input.expiresAt?.toISOString() ?? null,
  }
}

/**
 * Replaces a publishable key's origins. Every API replica uses them within 1 s (the key store's
 * cache, as for a revocation). A secret key has no origins: refused.
 */
export async function setApiKeyOrigins(deps: AccessDeps, keyId: string, origins: string[]): Promise<{ key_id: string; origins: string[] }> {
  const row = await setKeyOrigins(deps.database.db, keyId, origins)
  if (!row) throw new AppError('not_found', `key ${keyId} does not exist`)
  if (row.kind !== 'publishable') throw new AppError('conflict', `key ${keyId} is a secret key: only publishable keys have origins`)
  return { key_id: keyId, origins: row.origins ?? [] }
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
    kind: k.kind === 'publishable' ? ('publishable' as const) : ('secret' as const),
    origins: k.origins,
    rate_per_ip: k.ratePerIp,
    rate: k.rate,
    created_at: k.createdAt.toISOString(),
    expires_at: k.expiresAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
  }))
}
