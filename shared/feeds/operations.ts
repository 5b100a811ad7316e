/**
 * Portal feeds (contract §12): operators create, list and revoke a business's feed URLs with the
 * CLI; portals pull `GET /feeds/{token}/kyero.xml` without an API key, the token being the
 * credential. The XML is streamed from the catalogue read model in batches, so memory does not
 * grow with the catalogue, and its validators come from the business's catalogue version, so a
 * conditional request is answered without reading a single listing.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { findBusiness } from '../../db/queries/businesses'
import { catalogueForFeed, countCatalogueForFeed, findLiveFeedByTokenHash, insertFeed, listLiveFeeds, revokeFeed, type FeedRow } from '../../db/queries/feeds'
import type { PropertyView } from '../listings/schemas'
import { requireBusiness } from '../access/accounts'
import { AppError, notFound } from '../platform/errors'
import { openSecret, sealSecret } from '../platform/secret-box'
import type { Services } from '../platform/services'
import { FEED_FORMATS, type FeedFormat } from './formats'
import { KYERO_FOOTER, kyeroHeader, kyeroProperty } from './kyero'

export { FEED_FORMATS, type FeedFormat }

/** 256 random bits, URL-safe. */
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/
const tokenHash = (token: string) => createHash('sha256').update(token).digest()
const tokenContext = (businessId: number) => `feed-token:${businessId}`

export interface FeedView {
  id: number
  url: string
  format: FeedFormat
  created_at: string
}

const feedUrl = (publicUrl: string, token: string, format: FeedFormat) => `${publicUrl}/feeds/${token}/${format}.xml`

function viewOf(deps: Pick<Services, 'config'>, feed: FeedRow): FeedView {
  const token = openSecret(deps.config.appSecret, feed.tokenSealed, tokenContext(feed.businessId))
  return { id: feed.id, url: feedUrl(deps.config.publicUrl, token, feed.format), format: feed.format, created_at: feed.createdAt.toISOString() }
}

/** A new feed each time (contract §15): several portals, each with its own revocable URL. */
export async function createFeed(deps: Pick<Services, 'config' | 'database'>, businessId: number, format: FeedFormat): Promise<FeedView> {
  await requireBusiness(deps, businessId)
  const token = randomBytes(32).toString('base64url')
  const feed = await insertFeed(deps.database.db, {
    businessId,
    format,
    tokenHash: tokenHash(token).toString('hex'),
    tokenSealed: sealSecret(deps.config.appSecret, token, tokenContext(businessId)),
  })
  return viewOf(deps, feed)
}

export async function listFeeds(deps: Pick<Services, 'config' | 'database'>, businessId: number): Promise<FeedView[]> {
  await requireBusiness(deps, businessId)
  return (await listLiveFeeds(deps.database.db, businessId)).map((f) => viewOf(deps, f))
}

export async function revokeFeedById(deps: Pick<Services, 'database'>, feedId: number): Promise<void> {
  if (!(await revokeFeed(deps.database.db, feedId))) throw notFound(`Feed ${feedId}`)
}

export interface FeedValidators {
  etag: string
  lastModified: Date
}

export interface OpenedFeed {
  businessId: number
  format: FeedFormat
  validators: FeedValidators
}

const feedNotFound = () => notFound('Feed')

/** The live feed behind a token, with its validators; 404 for a malformed, unknown or revoked token alike. */
export async function openFeed(deps: Pick<Services, 'database'>, token: string, format: string): Promise<OpenedFeed> {
  if (!TOKEN_RE.test(token)) throw feedNotFound()
  const hash = tokenHash(token)
  const feed = await findLiveFeedByTokenHash(deps.database.sql, hash.toString('hex'))
  // Found by its hash through the index; compared again in constant time so no timing of the
  // comparison itself says how much of a guess was right.
  if (!feed || !timingSafeEqual(Buffer.from(feed.tokenHash, 'hex'), hash) || feed.format !== format) throw feedNotFound()
  return {
    businessId: feed.businessId,
    format: feed.format,
    validators: validatorsOf(feed.format, feed.businessId, feed.catalogueVersion, feed.catalogueChangedAt),
  }
}

function validatorsOf(format: FeedFormat, businessId: number, catalogueVersion: number, catalogueChangedAt: Date): FeedValidators {
  // Seconds: Last-Modified has no finer unit, and If-Modified-Since compares against it.
  const lastModified = new Date(Math.floor(catalogueChangedAt.getTime() / 1000) * 1000)
  return { etag: `"${format}-${businessId}-${catalogueVersion}"`, lastModified }
}

/** RFC 9110 §13.1: If-None-Match wins over If-Modified-Since. */
export function notModified(validators: FeedValidators, ifNoneMatch: string | null, ifModifiedSince: string | null): boolean {
  if (ifNoneMatch !== null) {
    return ifNoneMatch
      .split(',')
      .map((t) => t.trim().replace(/^W\//, ''))
      .some((t) => t === '*' || t === validators.etag)
  }
  if (ifModifiedSince !== null) {
    const since = Date.parse(ifModifiedSince)
    return Number.isFinite(since) && validators.lastModified.getTime() <= since
  }
  return false
}

/**
 * One catalogue row as a `<property>`. Rows are built by the catalogue rebuild, so they follow the
 * Property schema; one that does not is logged and left out rather than cutting every portal's
 * download short.
 */
function kyeroListing(deps: Pick<Services, 'logger'>, entry: { doc: string; changedAt: Date }): string {
  try {
    return kyeroProperty(JSON.parse(entry.doc) as PropertyView, entry.changedAt) ?? ''
  } catch (error) {
    deps.logger.error('feed: a catalogue row could not be written as a listing; left out', { error: (error as Error).message, doc: entry.doc.slice(0, 200) })
    return ''
  }
}

/**
 * The feed's XML in pieces, header, one piece per batch of catalogue rows, footer, with how many
 * rows each piece holds. The generation time is the catalogue's last change, so the same
 * version always produces the same bytes (the ETag is strong).
 */
export async function* kyeroFeedParts(
  deps: Pick<Services, 'database' | 'logger'>,
  feed: Pick<OpenedFeed, 'businessId' | 'validators'>,
): AsyncGenerator<{ xml: string; rows: number }> {
  yield { xml: kyeroHeader(feed.validators.lastModified), rows: 0 }
  for await (const batch of catalogueForFeed(deps.database.sql, feed.businessId)) {
    let xml = ''
    for (const entry of batch) xml += kyeroListing(deps, entry)
    yield { xml, rows: batch.length }
  }
  yield { xml: KYERO_FOOTER, rows: 0 }
}

/** The feed portals get, for an operator's export (`cli feed export`): no token, by business. */
export async function openBusinessFeed(deps: Pick<Services, 'database'>, businessId: number, format: FeedFormat): Promise<OpenedFeed & { rows: number }> {
  const business = await findBusiness(deps.database.db, businessId)
  if (!business) throw new AppError('not_found', `business ${businessId} does not exist`)
  const rows = await countCatalogueForFeed(deps.database.db, businessId)
  return { businessId, format, validators: validatorsOf(format, businessId, business.catalogueVersion, business.catalogueChangedAt), rows }
}

/**
 * How far the process's RSS may rise while a feed streams before a full collection. A feed
 * turns each listing into driver buffers, a decoded string, a parsed document and XML, about
 * 10 KB of garbage per listing, and the collector let it pile up: the first download of a
 * 100,000-listing feed raised the API's RSS by 129–190 MB (`bun run bench feed`). A collection
 * when the headroom is used keeps the rise near it, and after each one the ceiling is set from
 * what is left, so memory that stays (another download, other requests) never makes it collect
 * once per batch. The price, measured on a 2-core machine: about 150 collections of 12 ms (at
 * most 21 ms) over a 6 s download of 100,000 listings, each a pause for the process's other
 * requests; 8 MB keeps the rise under 50 MB (+42–45 MB), 16 MB halves the pauses for +59 MB.
 */
const FEED_RSS_HEADROOM = 8 * 1024 * 1024

function memoryCeiling(): () => void {
  let ceiling = process.memoryUsage.rss() + FEED_RSS_HEADROOM
  return () => {
    if (process.memoryUsage.rss() <= ceiling) return
    Bun.gc(true)
    ceiling = Math.max(ceiling, process.memoryUsage.rss() + FEED_RSS_HEADROOM)
  }
}

/** The feed's XML as a byte stream, read from the catalogue a batch at a time. */
export function streamKyeroFeed(deps: Pick<Services, 'database' | 'logger'>, feed: OpenedFeed): ReadableStream<Uint8Array> {
  let parts: AsyncGenerator<{ xml: string }> | undefined
  // A direct stream writes into the response's socket buffer and waits for it to drain
  // (flush), so a slow portal holds one batch in memory, never the feed.
  return new ReadableStream({
    type: 'direct',
    async pull(controller: { write(chunk: string): number | Promise<number>; flush(): number | Promise<number>; close(): void }) {
      try {
        parts = kyeroFeedParts(deps, feed)
        const collectAboveCeiling = memoryCeiling()
        for await (const part of parts) {
          controller.write(part.xml)
          await controller.flush()
          collectAboveCeiling()
        }
      } finally {
        controller.close()
      }
    },
    async cancel() {
      await parts?.return(undefined)
    },
  } as unknown as ConstructorParameters<typeof ReadableStream<Uint8Array>>[0])
}
