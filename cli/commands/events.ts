/**
 * `events tail` prints a business's events as they are recorded (every type, whatever a key
 * could see), one line each, or one JSON object per event with `--json`. Starts after the newest
 * event (`--after N` to start elsewhere); `--once` prints what there is and stops.
 */
import { plainJson } from '../../shared/platform/plain-json'
import { businessFlag, command, UsageError, type Group } from '../spec'

const POLL_MS = 500

export const events: Group = {
  name: 'events',
  summary: "a business's events (contract §10.1)",
  commands: {
    tail: command({
      summary: "follow a business's events as they are recorded",
      description: 'One line per event, or one JSON object per line with --json; with --once --json, one object holding them all. Ctrl-C stops.',
      options: {
        business: businessFlag,
        after: {
          value: '<sequence>',
          help: 'start after this sequence number (default: the newest event)',
          parse: (raw, flag) => {
            if (!/^\d{1,15}$/.test(raw)) throw new UsageError(`${flag} must be a sequence number, got "${raw}"`)
            return Number(raw)
          },
        },
        once: { help: 'print the events there are and stop' },
      },
      async run(args, ctx) {
        const { eventsAfter, lastEventSequence } = await import('../../shared/events/operations')
        const { requireBusiness } = await import('../../shared/access/accounts')
        const businessId = args.business
        await requireBusiness(ctx, businessId)
        let after = args.after ?? (await lastEventSequence(ctx, businessId))
        let stop = false
        process.once('SIGINT', () => (stop = true))
        process.once('SIGTERM', () => (stop = true))
        if (!ctx.json && !args.once) ctx.note(`following events of business ${businessId} after sequence ${after} (Ctrl-C stops)`)
        if (args.once && ctx.json) {
          // One JSON object, as every --json command prints.
          const all = []
          for (let page = await eventsAfter(ctx, businessId, after, 500); page.length; page = await eventsAfter(ctx, businessId, after, 500)) {
            all.push(...page)
            after = page[page.length - 1].sequence
          }
          ctx.out({ business_id: businessId, events: all, next_after: after })
          return
        }
        while (!stop) {
          const page = await eventsAfter(ctx, businessId, after, 500)
          for (const e of page) {
            process.stdout.write(
              ctx.json ? plainJson(e) + '\n' : `${e.sequence}  ${e.created_at}  ${e.id}  ${e.type}  ${plainJson(e.data.object).slice(0, 200)}\n`,
            )
            after = e.sequence
          }
          if (args.once && page.length < 500) break
          if (page.length < 500) await Bun.sleep(POLL_MS)
        }
      },
    }),
  },
}
