/** Portal feeds (contract §12): the feed rows, and the published catalogue read in batches for streaming. */
import { and, desc, eq, isNull, sql } from 'drizzle-orm'
import type { Db, Sql } from '../client'
import { catalogueCounts, feeds } from '../schema'

export type FeedRow = typeof feeds.$inferSelect

export async function insertFeed(db: Db, values: { businessId: number; format: 'kyero'; tokenHash: string; tokenSealed: string }): Promise<FeedRow> {
  const [row] = await db.insert(feeds).values(values).returning()
  return row
}

/** What answering a feed request needs of its row and of its business. */
export interface LiveFeed {
  businessId: number
  format: FeedRow['format']
  tokenHash: string
  catalogueVersion: number
  catalogueChangedAt: Date
}

/**
 * The live feed whose token has this SHA-256 (feeds_token_hash_uq), with its business's
 * catalogue version: one round trip, which is all a 304 costs. A fixed statement rather than
 * the query builder, whose per-call cost was a visible share of a 304 at c=16.
 */
export async function findLiveFeedByTokenHash(sql: Sql, tokenHash: string): Promise<LiveFeed | null> {
  const [row] = await sql<{ business_id: number; format: FeedRow['format']; token_hash: string; version: string; changed_ms: number }[]>`
    select f.business_id, f.format, f.token_hash, b.catalogue_version::text as version,
           extract(epoch from b.catalogue_changed_at)::float8 * 1000 as changed_ms
    from feeds f join businesses b on b.id = f.business_id
    where f.token_hash = ${tokenHash} and f.revoked_at is null`
  if (!row) return null
  return {
    businessId: row.business_id,
    format: row.format,
    tokenHash: row.token_hash,
    catalogueVersion: Number(row.version),
    catalogueChangedAt: new Date(row.changed_ms),
  }
}

export function listLiveFeeds(db: Db, businessId: number): Promise<FeedRow[]> {
  return db
    .select()
    .from(feeds)
    .where(and(eq(feeds.businessId, businessId), isNull(feeds.revokedAt)))
    .orderBy(desc(feeds.id))
}

/** Revokes a live feed; false when there is none with this id. */
export async function revokeFeed(db: Db, id: number): Promise<boolean> {
  const rows = await db
    .update(feeds)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(feeds.id, id), isNull(feeds.revokedAt)))
    .returning({ id: feeds.id })
  return rows.length > 0
}

export interface FeedEntry {
  /** The public document as stored (JSON text). */
  doc: string
  changedAt: Date
}

/**
 * The business's published listings, most recently updated first, `batchSize` rows at a time
 * through a server-side cursor, so a feed of any size is streamed in constant memory. The order
 * is catalogue_business_updated_idx's, so rows stream from the index without a sort.
 */
export async function* catalogueForFeed(sql: Sql, businessId: number, batchSize = 100): AsyncGenerator<FeedEntry[]> {
  // The pool's client is shared with drizzle, which reads timestamps as text.
  const cursor = sql<{ doc: string; changed_at: string | Date }[]>`
    select doc::text as doc, changed_at from catalogue_entries where business_id = ${businessId}
    order by updated_at desc nulls last, property_id desc nulls last`.cursor(batchSize)
  for await (const rows of cursor) yield rows.map((r) => ({ doc: r.doc, changedAt: new Date(r.changed_at) }))
}

/** How many catalogue rows a feed of the business reads: the triggers' count, not a scan. */
export async function countCatalogueForFeed(db: Db, businessId: number): Promise<number> {
  const [row] = await db.select({ entries: catalogueCounts.entries }).from(catalogueCounts).where(eq(catalogueCounts.businessId, businessId))
  return row?.entries ?? 0
}
