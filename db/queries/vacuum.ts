/**
 * Vacuuming where the server does not. Some PostgreSQL servers run with `autovacuum = off` (CI
 * images, hand-tuned hosts); the tables below then keep every dead row, and the outbox degrades
 * first: the relay's scan of the unrelayed events' index took 131 ms over 9M dead entries and
 * event-to-delivery latency went from 19 ms to 200 ms (docs/operations.md).
 */
import type { Sql } from '../client'

/** Tables that every few seconds of traffic rewrite rows of (updates and deletes). */
export const CHURNED_TABLES = [
  'event_outbox',
  'events',
  'event_counters',
  'webhook_deliveries',
  'webhook_attempts',
  'webhook_endpoints',
  'outreach_deliveries',
  'outreach_attempts',
  'idempotency_keys',
  'catalogue_entries',
  // Partitioned: VACUUM of it vacuums each partition. A list's walk of it is index-only only where
  // its visibility map is current.
  'catalogue_search',
  'catalogue_counts',
  'properties',
  'property_images',
  'property_videos',
  'contacts',
  'upload_sessions',
  'upload_files',
  'storage_deletions',
  'businesses',
]

export async function autovacuumIsOn(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ on: boolean }[]>`select current_setting('autovacuum') = 'on' as on`
  return row.on
}

/**
 * VACUUM (ANALYZE) of the churned tables that exist; SKIP_LOCKED, so that several workers doing it
 * at once, or a VACUUM an operator started, make it skip a table rather than wait.
 */
export async function vacuumChurnedTables(sql: Sql): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p') and c.relname = any(${CHURNED_TABLES})`
  const tables = rows.map((r) => r.name).sort()
  if (tables.length) await sql.unsafe(`vacuum (analyze, skip_locked) ${tables.map((t) => `"${t}"`).join(', ')}`)
  return tables
}
