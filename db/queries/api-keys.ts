import { and, eq, isNull, sql } from 'drizzle-orm'
import type { Db } from '../client'
import { apiKeys, businesses } from '../schema'

export interface KeyRecord {
  id: number
  keyId: string
  secretHash: string
  name: string | null
  scopes: string[]
  createdAt: Date
  expiresAt: Date | null
  revokedAt: Date | null
  business: { id: number; name: string }
}

export async function findKeyByKeyId(db: Db, keyId: string): Promise<KeyRecord | null> {
  const rows = await db
    .select({
      id: apiKeys.id, keyId: apiKeys.keyId, secretHash: apiKeys.secretHash, name: apiKeys.name, scopes: apiKeys.scopes,
      createdAt: apiKeys.createdAt, expiresAt: apiKeys.expiresAt, revokedAt: apiKeys.revokedAt,
      businessId: businesses.id, businessName: businesses.name,
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

export async function insertKey(db: Db, values: { businessId: number; keyId: string; secretHash: string; name: string | null; scopes: string[]; expiresAt: Date | null }) {
  const [row] = await db.insert(apiKeys).values(values).returning()
  return row
}

export async function revokeKey(db: Db, keyId: string): Promise<boolean> {
  const rows = await db.update(apiKeys).set({ revokedAt: sql`now()` }).where(and(eq(apiKeys.keyId, keyId), isNull(apiKeys.revokedAt))).returning({ id: apiKeys.id })
  if (rows.length) return true
  const existing = await db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.keyId, keyId))
  return existing.length > 0
}

export async function listKeys(db: Db, businessId: number) {
  return db
    .select({ keyId: apiKeys.keyId, name: apiKeys.name, scopes: apiKeys.scopes, createdAt: apiKeys.createdAt, expiresAt: apiKeys.expiresAt, revokedAt: apiKeys.revokedAt, lastUsedAt: apiKeys.lastUsedAt })
    .from(apiKeys)
    .where(eq(apiKeys.businessId, businessId))
    .orderBy(apiKeys.id)
}

/** One statement for a batch of `last_used_at` stamps (architecture.md: never a write per request). */
export async function touchKeys(db: Db, stamps: Map<number, Date>): Promise<void> {
  if (stamps.size === 0) return
  const ids = [...stamps.keys()]
  const times = ids.map((id) => stamps.get(id)!.toISOString())
  await db.execute(sql`
    update api_keys k set last_used_at = greatest(coalesce(k.last_used_at, v.t), v.t)
    from unnest(${`{${ids.join(',')}}`}::int[], ${`{${times.join(',')}}`}::timestamptz[]) as v(id, t)
    where k.id = v.id`)
}
