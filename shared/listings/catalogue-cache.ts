/**
 * An in-process cache of catalogue list pages and of the listing documents they are made of,
 * each valid for one catalogue generation of its business (catalogue_counts.generation,
 * migration 0018). Portals and agency sites ask the same pages over and over (the first page of
 * a city, a search word): a repeat costs one primary-key read of the generation instead of the
 * page's statement. A page never asked before still finds its documents kept from other pages,
 * so its statement reads only ids and the total from indexes instead of 100 documents (~85 KB)
 * from the table (20,000 listings, pgbench c=4: 2,579 → 8,999 statements/s).
 *
 * Correctness rests on the generation alone: the statement-level triggers of catalogue_entries
 * give the business a value never used before in every statement that inserts, changes or
 * deletes one of its rows, whoever writes (API, workers, CLI, a cascade). A page is stored with
 * the generation read in the page's own snapshot, and served only to a read that finds that same
 * generation on the same database it would have queried (primary, or a replica that the read
 * router found fresh enough), so it is exactly what that read would have answered. A key never
 * seen costs nothing more than before: the generation is read only for a key that has a page.
 */
import type { Sql } from '../../db/client'
import { catalogueDocs, catalogueGeneration, queryCataloguePage, listCatalogueIds, listCatalogueRows } from '../../db/queries/catalogue/list'
import type { CatalogueListQuery } from '../../db/queries/catalogue/statement'
import type { ConcurrencyLimit } from '../platform/concurrency-limit'

export interface CachedPage {
  count: number
  /** The page's docs joined by `,`, as UTF-8 bytes (an own copy, never a view of a socket buffer). */
  data: Uint8Array
}

interface Entry {
  generation: number
  count: number
  data: Uint8Array
  bytes: number
  /** Read since the eviction hand last passed it (CLOCK's second chance). */
  used: boolean
}

/** Per entry beyond the page's bytes: the key, the map slot, the objects. */
const ENTRY_OVERHEAD = 256
const SECOND_CHANCES = 32

/**
 * Entries of at most `maxBytes` in all, each for one generation, evicted by CLOCK (second
 * chance): a hit only marks its entry, so reading 100 documents of a page never reorders the map
 * (re-inserting on every hit, true LRU, was an eighth of the API's CPU on a cached page).
 */
class ClockCache<K> {
  /** In insertion order: the eviction hand walks from the oldest, re-inserting the entries read since. */
  private readonly entries = new Map<K, Entry>()
  bytes = 0

  constructor(readonly maxBytes: number) {}

  get count(): number {
    return this.entries.size
  }

  has(key: K): boolean {
    return this.entries.has(key)
  }

  get(key: K, generation: number): Entry | undefined {
    const entry = this.entries.get(key)
    if (!entry || entry.generation !== generation) return undefined
    entry.used = true
    return entry
  }

  set(key: K, generation: number, count: number, data: Uint8Array, keyBytes: number): void {
    const bytes = data.byteLength + keyBytes + ENTRY_OVERHEAD
    // One entry larger than an eighth of the space (limit=1000 pages of long documents) would
    // evict many small ones for one rare request.
    if (bytes > this.maxBytes / 8) return
    const old = this.entries.get(key)
    if (old) {
      this.entries.delete(key)
      this.bytes -= old.bytes
    }
    this.entries.set(key, { generation, count, data: new Uint8Array(data), bytes, used: false })
    this.bytes += bytes
    // The hand spares at most SECOND_CHANCES read entries per insertion: with every entry read
    // since its last pass (a hot catalogue) an unbounded walk would re-insert the whole map in
    // one request (1M listings: a p99 of 352 ms on the circle shape).
    let spared = 0
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break
      this.entries.delete(oldest)
      if (entry.used && spared++ < SECOND_CHANCES) {
        entry.used = false
        this.entries.set(oldest, entry)
      } else this.bytes -= entry.bytes
    }
  }
}

export class CataloguePageCache {
  /** A quarter of the space for pages, the rest for documents (shared by every page that shows them). */
  private readonly pages: ClockCache<string>
  private readonly docs: ClockCache<number>
  hits = 0
  misses = 0
  docHits = 0
  docMisses = 0
  /** Businesses whose documents have been kept once: their new pages read ids, then documents by id. */
  readonly seenBusinesses = new Set<number>()

  constructor(maxBytes: number) {
    this.pages = new ClockCache(maxBytes / 4)
    this.docs = new ClockCache(maxBytes - maxBytes / 4)
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.pages.count + this.docs.count, bytes: this.pages.bytes + this.docs.bytes }
  }

  /** Whether a page is stored for the key, whatever its generation (then the generation is worth reading). */
  has(key: string): boolean {
    return this.pages.has(key)
  }

  get(key: string, generation: number): CachedPage | undefined {
    const entry = this.pages.get(key, generation)
    return entry && { count: entry.count, data: entry.data }
  }

  set(key: string, generation: number, page: CachedPage): void {
    this.pages.set(key, generation, page.count, page.data, key.length * 2)
  }

  /**
   * A listing's document kept at this generation of its business. Generations are unique across
   * businesses (one sequence), so an entry found at the generation of the business being listed
   * was stored for that business.
   */
  getDoc(propertyId: number, generation: number): Uint8Array | undefined {
    return this.docs.get(propertyId, generation)?.data
  }

  setDoc(propertyId: number, generation: number, doc: Uint8Array): void {
    this.docs.set(propertyId, generation, 0, doc, 8)
  }

  /** Prometheus lines for /metrics. */
  renderMetrics(): string {
    return [
      '# HELP catalogue_cache_requests_total Catalogue list pages served from the in-process cache (hit) or read from PostgreSQL (miss).',
      '# TYPE catalogue_cache_requests_total counter',
      `catalogue_cache_requests_total{result="hit"} ${this.hits}`,
      `catalogue_cache_requests_total{result="miss"} ${this.misses}`,
      '# HELP catalogue_cache_documents_total Listing documents of list pages taken from the in-process cache (hit) or read from PostgreSQL (miss).',
      '# TYPE catalogue_cache_documents_total counter',
      `catalogue_cache_documents_total{result="hit"} ${this.docHits}`,
      `catalogue_cache_documents_total{result="miss"} ${this.docMisses}`,
      '# HELP catalogue_cache_bytes Bytes of list pages and listing documents held by the in-process cache.',
      '# TYPE catalogue_cache_bytes gauge',
      `catalogue_cache_bytes ${this.size.bytes}`,
      '',
    ].join('\n')
  }
}

const COMMA = new Uint8Array([0x2c])

/** The documents joined by `,`: the inside of the response's `data` array. */
function joinDocs(docs: Uint8Array[]): Uint8Array {
  return Buffer.concat(docs.flatMap((doc, i) => (i ? [COMMA, doc] : [doc])))
}

/**
 * One page of the list. A page whose key is stored and whose business's generation has not moved
 * is served as it is. Otherwise, for a business seen before, the statement only finds the page's
 * ids and total from indexes (no document read, no heap visit for most shapes) and the documents
 * come from the cache; those it lacks at that generation (all of them after a change) are read
 * by id, checked to be at the same generation. A business never seen gets the statement that
 * returns every document of the page on its own row, and they are kept for the next pages.
 * The page's statements take a turn of `bound` (CATALOGUE_CONCURRENCY); a stored page's
 * generation check is one primary-key read and never waits behind them.
 */
export async function readCataloguePage(
  sql: Sql,
  query: CatalogueListQuery,
  cache: CataloguePageCache | undefined,
  bound?: ConcurrencyLimit,
): Promise<CachedPage> {
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => (bound ? bound.run(work) : work())
  if (!cache) return inTurn(() => queryCataloguePage(sql, query))
  const key = `p ${JSON.stringify(query)}`
  if (cache.has(key)) {
    const page = cache.get(key, await catalogueGeneration(sql, query.businessId))
    if (page) {
      cache.hits++
      return page
    }
  }
  cache.misses++
  const page = await inTurn(async () => (await pageFromKeptDocs(sql, query, cache)) ?? (await pageWithDocs(sql, query, cache)))
  cache.set(key, page.generation, page)
  return page
}

async function pageFromKeptDocs(sql: Sql, query: CatalogueListQuery, cache: CataloguePageCache): Promise<(CachedPage & { generation: number }) | undefined> {
  const businessId = query.businessId
  if (!cache.seenBusinesses.has(businessId)) return undefined
  const { count, ids, generation } = await listCatalogueIds(sql, query)
  // Documents kept at an older generation are not found at this one: a change costs a read of
  // the page's documents by id, not the page's statement again.
  const docs = new Map<number, Uint8Array>()
  const missing: number[] = []
  for (const id of ids) {
    const doc = cache.getDoc(id, generation)
    if (doc) docs.set(id, doc)
    else missing.push(id)
  }
  cache.docHits += docs.size
  if (missing.length) {
    cache.docMisses += missing.length
    const fetched = await catalogueDocs(sql, businessId, missing)
    if (fetched.generation !== generation) return undefined
    for (const [id, doc] of fetched.docs) {
      docs.set(id, doc)
      cache.setDoc(id, generation, doc)
    }
  }
  const ordered = ids.map((id) => docs.get(id))
  if (!ordered.every((doc): doc is Uint8Array => doc !== undefined)) return undefined
  return { count, generation, data: joinDocs(ordered) }
}

async function pageWithDocs(sql: Sql, query: CatalogueListQuery, cache: CataloguePageCache): Promise<CachedPage & { generation: number }> {
  const { count, docs, generation } = await listCatalogueRows(sql, query)
  cache.seenBusinesses.add(query.businessId)
  cache.docMisses += docs.length
  for (const [id, doc] of docs) cache.setDoc(id, generation, doc)
  return { count, generation, data: joinDocs(docs.map(([, doc]) => doc)) }
}
