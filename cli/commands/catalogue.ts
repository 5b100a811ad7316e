/**
 * `catalogue reindex` rebuilds every catalogue row (of one business, or all) from the source
 * tables, in id-ordered batches. Use it after a change to how the public representation is
 * derived. Safe to re-run and to interrupt: each batch commits on its own.
 */
import type { ReindexProgress } from '../../shared/listings/operations'
import { businessFlag, command, positiveInt, type Group } from '../spec'

const counts = (p: ReindexProgress) => `(${p.upserted} published, ${p.deleted} drafts)`

export const catalogue: Group = {
  name: 'catalogue',
  summary: 'the public catalogue read model',
  commands: {
    reindex: command({
      summary: 'rebuild the catalogue rows from the source tables',
      description: 'In id-ordered batches, each committed on its own: safe to interrupt and to re-run. Progress on stderr when it is a terminal.',
      options: {
        business: { ...businessFlag, required: false, help: 'only this business (default: all)' },
        'batch-size': { value: '<n>', help: 'properties per batch (default 2000)', parse: positiveInt },
      },
      async run(args, ctx) {
        const { reindexCatalogue } = await import('../../shared/listings/operations')
        const start = performance.now()
        const done = await reindexCatalogue(ctx, { businessId: args.business, batchSize: args['batch-size'] ?? 2000 }, (p) => {
          const secs = (performance.now() - start) / 1000
          ctx.progress(`catalogue reindex: ${p.seen}/${p.total} properties ${counts(p)} in ${secs.toFixed(1)} s`)
        })
        const seconds = Math.round((performance.now() - start) / 100) / 10
        ctx.out(
          { business_id: args.business ?? null, properties: done.seen, published: done.upserted, drafts: done.deleted, seconds },
          `reindexed ${done.seen} properties ${counts(done)} in ${seconds} s`,
        )
      },
    }),
  },
}
