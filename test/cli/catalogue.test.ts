import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createProperty, createPublished } from '../helpers/properties'

// Each test spawns the CLI as a real process, some several times: seconds each on a loaded machine.
setDefaultTimeout(60_000)

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const cli = async (...args: string[]) => {
  const proc = Bun.spawn(['bun', 'run', 'cli/index.ts', ...args], { cwd: `${import.meta.dir}/../..`, env: { ...process.env }, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

describe('bun run cli catalogue reindex', () => {
  test('rebuilds a business in batches with progress on stderr and one JSON object on stdout', async () => {
    const published = [await createPublished(ctx, biz.apiKey), await createPublished(ctx, biz.apiKey), await createPublished(ctx, biz.apiKey)]
    const draft = await createProperty(ctx, biz.apiKey)
    const db = ctx.deps.database.db
    await db.execute(sql`delete from catalogue_entries where property_id = ${published[0]}`)
    await db.execute(sql`update catalogue_entries set doc = '{}' where property_id = ${published[1]}`)
    await db.execute(sql`insert into catalogue_entries (property_id, business_id, doc, status, operations, type, bedrooms, is_featured, updated_at)
        values (${draft}, ${biz.id}, '{}', 'x', '{}', 'casa', 0, false, now())`)
    const r = await cli('catalogue', 'reindex', '--business', String(biz.id), '--batch-size', '2', '--json')
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ business_id: biz.id, properties: 4, published: 3, drafts: 1 })
    // Progress is for a terminal; piped, stderr stays empty (the terminal case: test/cli/terminal.test.ts).
    expect(r.stderr).toBe('')
    const rows = await db.execute<{ property_id: number; id: number }>(
      sql`select property_id, (doc->>'id')::int as id from catalogue_entries where business_id = ${biz.id} order by property_id`,
    )
    expect(rows.map((x) => [x.property_id, x.id])).toEqual(published.map((id) => [id, id]))
  })

  test('an unknown business is a clear error at run time (exit 1)', async () => {
    const r = await cli('catalogue', 'reindex', '--business', '2147483000')
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('business 2147483000 does not exist')
  })
})
