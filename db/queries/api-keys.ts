import { and, eq, isNull, sql } from 'drizzle-orm'
import type { Db } from '../client'
import { apiKeys, businesses } from '../schema'

export interface KeyRecord {
  id: number
  keyId: string
  secretHash: string
  name: string | null
  scopes: string[]
  kind: string
  origins: string[] | null
  ratePerIp: string | null
  rate: string | null
  createdAt: Date
  expiresAt: Date | null
  revokedAt: Date | null
  business: { id: number; name: string }
}

export async function findKeyByKeyId(db: Db, keyId: string): Promise<KeyRecord | null> {
  const rows = await db
    .select({
      id: apiKeys.id,
      keyId: apiKeys.keyId,
      secretHash: apiKeys.secretHash,
      name: apiKeys.name,
      scopes: apiKeys.scopes,
      kind: apiKeys.kind,
      origins: apiKeys.origins,
      ratePerIp: apiKeys.ratePerIp,
      rate: apiKeys.rate,
      createdAt: apiKeys.createdAt,
      expiresAt: apiKeys.expiresAt,
      revokedAt: apiKeys.revokedAt,
      businessId: businesses.id,
      businessName: businesses.name,
    })
    .from(apiKeys)
    .innerJoin(businesses, eq(businesses.id, apiKeys.businessId))
    .where(eq(apiKeys.keyId, keyId))
    .limit(1)
  const r = rows[0]
  if (!r) return null
  const { businessId, businessName, ...key } = r
  return { ...key, business: { id: businessId, name: businessName } }
}

export interface NewKeyRow {
  businessId: number
  keyId: string
  secretHash: string
  name: string | null
  scopes: string[]
  expiresAt: Date | null
  /** Publishable keys (contract §16.1): the kind, origins and rates; a secret key leaves them out. */
  kind?: 'secret' | 'publishable'
  origins?: string[] | null
  ratePerIp?: string | null
  rate?: string | null
}

export async function insertKey(db: Db, values: NewKeyRow) {
  const [row] = await db.insert(apiKeys).values(values).returning()
  return row
}

export async function revokeKey(db: Db, keyId: string): Promise<boolean> {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(apiKeys.keyId, keyId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id })
  if (rows.length) return true
  const existing = await db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.keyId, keyId))
  return existing.length > 0
}

export async function listKeys(db: Db, businessId: number) {
  return db
    .select({
      keyId: apiKeys.keyId,
      name: apiKeys.name,
      scopes: apiKeys.scopes,
      kind: apiKeys.kind,
      origins: apiKeys.origins,
      ratePerIp: apiKeys.ratePerIp,
      rate: apiKeys.rate,
      createdAt: apiKeys.createdAt,
      expiresAt: apiKeys.expiresAt,
      revokedAt: apiKeys.revokedAt,
      lastUsedAt: apiKeys.lastUsedAt,
    })
    .from(apiKeys)
    .where(eq(apiKeys.businessId, businessId))
    .orderBy(apiKeys.id)
}

/**
 * Replaces a publishable key's origins. Null when no key has this id; `kind` tells a secret key
 * (unchanged: it has no origins) from a publishable one.
 */
export async function setKeyOrigins(db: Db, keyId: string, origins: string[]): Promise<{ kind: string; origins: string[] | null } | null> {
  const updated = await db
    .update(apiKeys)
    .set({ origins })
    .where(and(eq(apiKeys.keyId, keyId), eq(apiKeys.kind, 'publishable')))
    .returning({ kind: apiKeys.kind, origins: apiKeys.origins })
  if (updated.length) return updated[0]
  const [existing] = await db.select({ kind: apiKeys.kind, origins: apiKeys.origins }).from(apiKeys).where(eq(apiKeys.keyId, keyId))
  return existing ?? null
}

/** One statement for a batch of `last_used_at` stamps (architecture.md: never a write per request). */
export async function touchKeys(db: Db, stamps: Map<number, Date>): Promise<void> {
  if (stamps.size === 0) return
  const ids = [...stamps.keys()]
  const times = [...stamps.values()].map((at) => at.toISOString())
  await db.execute(sql`
    update api_keys k set last_used_at = greatest(coalesce(k.last_used_at, v.t), v.t)
    from unnest(${`{${ids.join(',')}}`}::int[], ${`{${times.join(',')}}`}::timestamptz[]) as v(id, t)
    where k.id = v.id`)
}
