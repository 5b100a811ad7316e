/**
 * `bun run cli catalogue reindex [--business N] [--batch-size N]`: rebuilds every catalogue row
 * (of one business, or all) from the source tables, in id-ordered batches, with progress on
 * stderr. Use it after a change to how the public representation is derived. Safe to re-run
 * and to interrupt: each batch commits on its own.
 */
import { reindexCatalogue, type ReindexProgress } from '../../shared/listings/operations'
import { CliError, intFlag, type CliContext, type Flags } from '../io'

export const usage = `  catalogue reindex [--business <id>] [--batch-size <n, default 2000>] [--json]`

const counts = (p: ReindexProgress) => `(${p.upserted} published, ${p.deleted} drafts)`

export async function run(f: Flags, ctx: CliContext): Promise<void> {
  const [command] = f.positional
  if (command !== 'reindex') throw new CliError(`unknown command "catalogue ${command ?? ''}"\n${usage}`)
  const businessId = intFlag(f, 'business')
  const batchSize = intFlag(f, 'batch-size') ?? 2000
  const start = performance.now()
  const done: ReindexProgress = await reindexCatalogue(ctx, { businessId, batchSize }, (p) => {
    const secs = (performance.now() - start) / 1000
    ctx.progress(`catalogue reindex: ${p.seen}/${p.total} properties ${counts(p)} in ${secs.toFixed(1)} s`)
  })
  const seconds = Math.round((performance.now() - start) / 100) / 10
  ctx.out({ business_id: businessId ?? null, properties: done.seen, published: done.upserted, drafts: done.deleted, seconds }, `reindexed ${done.seen} properties ${counts(done)} in ${seconds} s`)
}
