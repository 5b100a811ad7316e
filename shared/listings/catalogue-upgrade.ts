/**
 * Rows stored before a change to the public document (architecture.md "Data": the catalogue is
 * derived from the source tables) are rebuilt without an operator having to remember it. The
 * code's CATALOGUE_DOC_VERSION names the derivation it builds; `catalogue_derivation` (migration
 * 0029) names the one the stored rows were built with. The first worker process to see the
 * stored one behind moves it forward and, in the same transaction, queues an id-ordered
 * reindex of every business with catalogue rows (`catalogue-reindex` slices, each committed on
 * its own and safe to repeat), which the catalogue-reindex workers then run in the background.
 * `bun run cli catalogue reindex` does the same at once, in the foreground.
 */
import { advanceCatalogueDerivation, businessesWithCatalogueRows } from '../../db/queries/catalogue/rebuild'
import type { Services } from '../platform/services'

/**
 * The derivation of the public document this code builds. Raise it with any change to what a
 * published document holds that rows stored before must get:
 * 1. `description` and each `translations` description sanitised (contract §15 §3).
 */
export const CATALOGUE_DOC_VERSION = 1

/** Properties per reindex slice: the size `cli catalogue reindex` uses. */
const SLICE = 2000

/**
 * Queues the rebuild of every business's catalogue rows when the stored derivation is behind
 * this code's; returns how many businesses were queued, or null when nothing was behind (the
 * usual case: one UPDATE that matches no row). If queueing fails, nothing moved, and the next
 * call tries again.
 */
export async function upgradeCatalogueDocs(deps: Pick<Services, 'database' | 'queues' | 'logger'>): Promise<number | null> {
  const queued = await deps.database.db.transaction(async (tx) => {
    if (!(await advanceCatalogueDerivation(tx, CATALOGUE_DOC_VERSION))) return null
    const businesses = await businessesWithCatalogueRows(tx)
    if (businesses.length)
      await deps.queues.enqueueBulk(
        'catalogue-reindex',
        businesses.map((businessId) => ({ businessId, afterId: 0, batchSize: SLICE })),
      )
    return businesses.length
  })
  if (queued !== null) deps.logger.info('catalogue rows built by an earlier version are being rebuilt', { version: CATALOGUE_DOC_VERSION, businesses: queued })
  return queued
}
