import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import * as schema from './schema'

export type Db = PostgresJsDatabase<typeof schema>
export type Sql = postgres.Sql

export interface Database {
  sql: Sql
  db: Db
  /**
   * LISTEN on `channel`, calling `onNotify` with each payload (resolves once listening). LISTEN
   * needs a session that outlives a transaction, so it takes a dedicated connection to
   * `directUrl` (PostgreSQL itself, never a transaction-mode pooler), re-listening after a reconnect.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<{ unlisten(): Promise<void> }>
  close(timeoutSeconds?: number): Promise<void>
}

/** Each pool's Database by its driver, so code holding only the drizzle handle reaches `listen`. */
const byClient = new WeakMap<object, Database>()

/** The Database a drizzle handle (or a transaction's parent) was made from by createDatabase, if any. */
export function databaseOf(db: Db): Database | undefined {
  const client = (db as { $client?: object }).$client
  return client ? byClient.get(client) : undefined
}

const CONNECTION_OPTIONS = {
  // No named prepared statements: behind a transaction-mode pooler (PgBouncer) the next
  // transaction runs on another server backend where a cached name does not exist (26000), and
  // postgres.js retried inside the aborted transaction, whose COMMIT then answered ROLLBACK. The
  // cost, measured on the catalogue and ingest benchmarks, is in docs/operations.md "PgBouncer".
  prepare: false,
  // A stopped PostgreSQL must answer as a quick 503, not a hung request.
  connect_timeout: 5,
  // Wait before reconnecting a connection that failed: postgres.js grows it up to 20 s,
  // shared by the whole pool, and queries queue meanwhile, so during an outage requests hung
  // for seconds and recovery after a restart took as long (fault harness, scenario c). A
  // refused connection costs nothing, so retry within a second at most.
  backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
  idle_timeout: 30,
  onnotice: () => {},
} satisfies postgres.Options<Record<string, never>>

/**
 * One pool per process; `db` (drizzle) and `sql` (raw, for catalogue and bulk statements) share it.
 * `directUrl` (default `url`) reaches PostgreSQL without a pooler, for LISTEN.
 */
export function createDatabase(url: string, options: { max?: number; directUrl?: string } = {}): Database {
  const sql = postgres(url, { ...CONNECTION_OPTIONS, max: options.max ?? 20 })
  const db = drizzle(sql, { schema })
  let direct: Sql | undefined
  const database: Database = {
    sql,
    db,
    listen: async (channel, onNotify) => {
      direct ??= options.directUrl && options.directUrl !== url ? postgres(options.directUrl, { ...CONNECTION_OPTIONS, max: 1 }) : sql
      const { unlisten } = await direct.listen(channel, onNotify)
      return { unlisten }
    },
    close: async (timeout = 5) => {
      await Promise.all([sql.end({ timeout }), direct !== sql && direct?.end({ timeout })])
    },
  }
  byClient.set(sql, database)
  return database
}

/** Unique-violation check by SQLSTATE, never by message text. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = (error as { cause?: unknown })?.cause ?? error
  const code = (e as { code?: string })?.code
  if (code !== '23505') return false
  return constraint === undefined || (e as { constraint_name?: string }).constraint_name === constraint
}
