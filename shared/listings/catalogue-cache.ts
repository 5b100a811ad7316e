/**
 * An in-process cache of catalogue list pages, keyed by the list query and valid for one
 * catalogue generation of its business (catalogue_counts.generation, migration 0018). Portals
 * and agency sites ask the same pages over and over (the first page of a city, a search word);
 * a repeat costs one primary-key read of the generation instead of the page's statement.
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
import { catalogueGeneration, listCatalogue as queryCataloguePage, type CatalogueListQuery } from '../../db/queries/catalogue'

export interface CachedPage {
  count: number
  /** The page's docs joined by `,`, as UTF-8 bytes (an own copy, never a view of a socket buffer). */
  data: Uint8Array
}

interface Entry {
  generation: number
  page: CachedPage
  bytes: number
}

/** Per entry beyond the page's bytes: the key, the map slot, the objects. */
const ENTRY_OVERHEAD = 256

export class CataloguePageCache {
  /** In least-recently-used order: a Map iterates in insertion order, and a hit re-inserts. */
  private readonly entries = new Map<string, Entry>()
  private bytes = 0
  hits = 0
  misses = 0

  constructor(private readonly maxBytes: number) {}

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes }
  }

  /** Whether a page is stored for the key, whatever its generation (then the generation is worth reading). */
  has(key: string): boolean {
    return this.entries.has(key)
  }

  get(key: string, generation: number): CachedPage | undefined {
    const entry = this.entries.get(key)
    if (!entry || entry.generation !== generation) return undefined
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.page
  }

  set(key: string, generation: number, page: CachedPage): void {
    const bytes = page.data.byteLength + key.length * 2 + ENTRY_OVERHEAD
    // A page larger than an eighth of the cache (limit=1000 pages of long documents) would
    // evict many small ones for one rare request.
    if (bytes > this.maxBytes / 8) return
    this.delete(key)
    this.entries.set(key, { generation, page: { count: page.count, data: new Uint8Array(page.data) }, bytes })
    this.bytes += bytes
    for (const [oldest] of this.entries) {
      if (this.bytes <= this.maxBytes) break
      this.delete(oldest)
    }
  }

  private delete(key: string): void {
    const entry = this.entries.get(key)
    if (!entry) return
    this.entries.delete(key)
    this.bytes -= entry.bytes
  }

  /** Prometheus lines for /metrics. */
  renderMetrics(): string {
    return [
      '# HELP catalogue_cache_requests_total Catalogue list pages served from the in-process cache (hit) or read from PostgreSQL (miss).',
      '# TYPE catalogue_cache_requests_total counter',
      `catalogue_cache_requests_total{result="hit"} ${this.hits}`,
      `catalogue_cache_requests_total{result="miss"} ${this.misses}`,
      '# HELP catalogue_cache_bytes Bytes of list pages held by the in-process cache.',
      '# TYPE catalogue_cache_bytes gauge',
      `catalogue_cache_bytes ${this.bytes}`,
      '',
    ].join('\n')
  }
}

/** One page of the list: from the cache when its business's generation has not moved, else from PostgreSQL (and kept). */
export async function readCataloguePage(sql: Sql, query: CatalogueListQuery, cache: CataloguePageCache | undefined): Promise<CachedPage> {
  if (!cache) return queryCataloguePage(sql, query)
  const key = JSON.stringify(query)
  if (cache.has(key)) {
    const page = cache.get(key, await catalogueGeneration(sql, query.businessId))
    if (page) {
      cache.hits++
      return page
    }
  }
  cache.misses++
  const page = await queryCataloguePage(sql, query)
  cache.set(key, page.generation, page)
  return page
}
