/**
 * `bun run cli events tail --business <id>`: prints a business's events as they are recorded
 * (every type, whatever a key could see), one line each, or one JSON object per event with
 * `--json`. Starts after the newest event (`--after N` to start elsewhere); `--once` prints what
 * there is and stops.
 */
import { eventsAfter, lastEventSequence } from '../../shared/events/operations'
import { requireBusiness } from '../../shared/access/accounts'
import { CliError, intFlag, stringFlag, type CliContext, type Flags } from '../io'

export const usage = `  events tail --business <id> [--after <sequence>] [--once] [--json]   (follows new events, a JSON object per line with --json; --once --json prints one object)`

const POLL_MS = 500

export async function run(f: Flags, ctx: CliContext): Promise<void> {
  const [command] = f.positional
  if (command !== 'tail') throw new CliError(`unknown command "events ${command ?? ''}"\n${usage}`)
  const businessId = intFlag(f, 'business', true)
  await requireBusiness(ctx, businessId)
  const afterFlag = stringFlag(f, 'after')
  if (afterFlag !== undefined && !/^\d{1,15}$/.test(afterFlag)) throw new CliError(`--after must be a sequence number, got "${afterFlag}"`)
  let after = afterFlag !== undefined ? Number(afterFlag) : await lastEventSequence(ctx, businessId)
  const once = f.flags.once === true
  let stop = false
  process.once('SIGINT', () => (stop = true))
  process.once('SIGTERM', () => (stop = true))
  if (!ctx.json && !once) ctx.progress(`following events of business ${businessId} after sequence ${after} (Ctrl-C stops)`)
  if (once && ctx.json) {
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
    const events = await eventsAfter(ctx, businessId, after, 500)
    for (const e of events) {
      process.stdout.write(ctx.json ? JSON.stringify(e) + '\n' : `${e.sequence}  ${e.created_at}  ${e.id}  ${e.type}  ${JSON.stringify(e.data.object).slice(0, 200)}\n`)
      after = e.sequence
    }
    if (once && events.length < 500) break
    if (events.length < 500) await Bun.sleep(POLL_MS)
  }
}
