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
   * needs a session that outlives a transaction: today a dedicated connection of this driver
   * (re-listening after a reconnect); behind a transaction-mode pooler such as PgBouncer, this
   * is where a direct connection to PostgreSQL goes.
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

/** One pool per process; `db` (drizzle) and `sql` (raw, for catalogue and bulk statements) share it. */
export function createDatabase(url: string, options: { max?: number } = {}): Database {
  const sql = postgres(url, {
    max: options.max ?? 20,
    // A stopped PostgreSQL must answer as a quick 503, not a hung request.
    connect_timeout: 5,
    // Wait before reconnecting a connection that failed: postgres.js grows it up to 20 s,
    // shared by the whole pool, and queries queue meanwhile, so during an outage requests hung
    // for seconds and recovery after a restart took as long (fault harness, scenario c). A
    // refused connection costs nothing, so retry within a second at most.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    idle_timeout: 30,
    onnotice: () => {},
  })
  const db = drizzle(sql, { schema })
  const database: Database = {
    sql,
    db,
    listen: async (channel, onNotify) => {
      const { unlisten } = await sql.listen(channel, onNotify)
      return { unlisten }
    },
    close: (timeout = 5) => sql.end({ timeout }),
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
