/**
 * On a PostgreSQL server with autovacuum off the worker's maintenance vacuums the tables traffic
 * churns; with it on, it does nothing. The branch taken is the server's: both are checked against
 * what the server reports.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { autovacuumIsOn, CHURNED_TABLES, vacuumChurnedTables } from '../../db/queries/vacuum'
import { vacuumWithoutAutovacuum } from '../../shared/platform/vacuum'
import { MAINTENANCE_TASKS } from '../../worker/maintenance'
import { createTestContext, type TestContext } from '../helpers/context'

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

const lastVacuum = async (table: string) =>
  (await ctx.deps.database.sql<{ at: Date | null }[]>`select last_vacuum as at from pg_stat_user_tables where relname = ${table}`)[0]?.at ?? null

describe('vacuum where the server does not', () => {
  test('vacuumChurnedTables vacuums every churned table that exists', async () => {
    const started = new Date(Date.now() - 1000)
    const tables = await vacuumChurnedTables(ctx.deps.database.sql)
    expect(tables).toContain('events')
    expect(tables).toContain('webhook_deliveries')
    expect(tables.every((t) => CHURNED_TABLES.includes(t))).toBe(true)
    for (const table of ['events', 'contacts', 'catalogue_entries', 'catalogue_search_00'])
      expect(new Date(String(await lastVacuum(table))).getTime()).toBeGreaterThanOrEqual(started.getTime())
  })

  test('the maintenance task vacuums exactly when autovacuum is off', async () => {
    expect(MAINTENANCE_TASKS.vacuum).toBeDefined()
    const on = await autovacuumIsOn(ctx.deps.database.sql)
    const vacuumed = await vacuumWithoutAutovacuum(ctx.deps)
    if (on) expect(vacuumed).toEqual([])
    else expect(vacuumed).toContain('events')
  })
})
