/**
 * PostgreSQL without autovacuum: the worker's maintenance vacuums the tables traffic churns
 * (db/queries/vacuum.ts), so a server run with `autovacuum = off` degrades no further than ten
 * minutes of dead rows. With autovacuum on (the normal case) it does nothing.
 */
import { autovacuumIsOn, vacuumChurnedTables } from '../../db/queries/vacuum'
import type { Services } from './services'

let warned = false

/** The tables vacuumed; none when autovacuum is on. */
export async function vacuumWithoutAutovacuum(deps: Pick<Services, 'database' | 'logger'>): Promise<string[]> {
  if (await autovacuumIsOn(deps.database.sql)) return []
  if (!warned) {
    warned = true
    deps.logger.warn(
      'autovacuum is off on this PostgreSQL server: the worker vacuums the tables traffic churns every 10 minutes; turn autovacuum on (docs/operations.md)',
      {},
    )
  }
  return vacuumChurnedTables(deps.database.sql)
}
