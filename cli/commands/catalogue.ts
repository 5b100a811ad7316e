/**
 * `bun run cli catalogue reindex [--business N] [--batch-size N]`: rebuilds every catalogue row
 * (of one business, or all) from the source tables, in id-ordered batches, with progress on
 * stderr. Use it after a change to how the public representation is derived. Safe to re-run
 * and to interrupt: each batch commits on its own.
 */
import { findBusiness } from '../../db/queries/businesses'
import { rebuildCatalogueBatch } from '../../db/queries/catalogue'
import { CliError, intFlag, type CliContext, type Flags } from '../io'

export const usage = `  catalogue reindex [--business <id>] [--batch-size <n, default 2000>] [--json]`

export async function run(f: Flags, ctx: CliContext): Promise<void> {
  const [command] = f.positional
  if (command !== 'reindex') throw new CliError(`unknown command "catalogue ${command ?? ''}"\n${usage}`)
  const businessId = intFlag(f, 'business')
  const batchSize = intFlag(f, 'batch-size') ?? 2000
  const { db, sql } = ctx.database
  if (businessId !== undefined && !(await findBusiness(db, businessId))) throw new CliError(`business ${businessId} does not exist`)
  const [{ total }] = businessId === undefined
    ? await sql<{ total: number }[]>`select count(*)::int as total from properties`
    : await sql<{ total: number }[]>`select count(*)::int as total from properties where business_id = ${businessId}`
  const start = performance.now()
  let afterId = 0
  let seen = 0
  let upserted = 0
  let deleted = 0
  for (;;) {
    const r = await rebuildCatalogueBatch(db, { businessId, afterId, batchSize })
    if (r.lastId === null) break
    afterId = r.lastId
    upserted += r.upserted
    deleted += r.deleted
    seen += r.upserted + r.deleted
    const secs = (performance.now() - start) / 1000
    ctx.progress(`catalogue reindex: ${seen}/${total} properties (${upserted} published, ${deleted} drafts) in ${secs.toFixed(1)} s`)
  }
  const seconds = Math.round((performance.now() - start) / 100) / 10
  ctx.out({ business_id: businessId ?? null, properties: seen, published: upserted, drafts: deleted, seconds }, `reindexed ${seen} properties (${upserted} published, ${deleted} drafts) in ${seconds} s`)
}
