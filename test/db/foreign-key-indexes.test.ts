import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTestContext, type TestContext } from '../helpers/context'

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

describe('schema', () => {
  test('every foreign key a row delete follows is backed by an index (else each deleted parent row scans the child table)', async () => {
    const unindexed = await ctx.deps.database.sql<{ child: string; column: string }[]>`
      select c.conrelid::regclass::text as child, a.attname as column
      from pg_constraint c
      join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
      where c.contype = 'f'
        and not exists (select 1 from pg_index i where i.indrelid = c.conrelid and i.indkey[0] = c.conkey[1])
      order by 1, 2`
    // business_id is the exception: a business is deleted as a whole, one scan per table, and
    // every query of these tables starts from a more selective index.
    expect(unindexed.filter((r) => r.column !== 'business_id')).toEqual([])
  })
})
