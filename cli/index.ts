/**
 * `bun run cli <group> <command> [flags]`: the operator CLI (contract §1). Each group is a
 * module in cli/commands/<group>.ts exporting `run(flags, ctx)` and `usage`.
 */
import { AppError } from '../shared/platform/errors'
import { CliError, makeContext, parseFlags, type CliContext, type Flags } from './io'

export interface CommandGroup {
  usage: string
  run(flags: Flags, ctx: CliContext): Promise<void>
}

const GROUPS = ['business', 'key', 'catalogue', 'outreach', 'watermark', 'feed', 'webhooks', 'events', 'queues'] as const

async function main(argv: string[]): Promise<number> {
  const [group, ...rest] = argv
  const loadable = GROUPS.filter((g) => Bun.file(new URL(`./commands/${g}.ts`, import.meta.url)).size > 0)
  if (!group || group === '--help' || group === 'help' || !(GROUPS as readonly string[]).includes(group)) {
    const usages = await Promise.all(loadable.map(async (g) => ((await import(`./commands/${g}.ts`)) as CommandGroup).usage))
    process.stderr.write(`usage: bun run cli <group> <command> [flags]\n\n${usages.join('\n')}\n`)
    return group && group !== '--help' && group !== 'help' ? 2 : 0
  }
  const flags = parseFlags(rest)
  const mod = (await import(`./commands/${group}.ts`)) as CommandGroup
  const ctx = await makeContext(flags.flags.json === true)
  try {
    await mod.run(flags, ctx)
    return 0
  } finally {
    await ctx.database.close(2)
  }
}

try {
  process.exitCode = await main(process.argv.slice(2))
} catch (error) {
  // A refusal from an operation (unknown business, key or feed; invalid input) is the operator's
  // mistake like a bad flag: one line and exit 2. Anything else failed at run time: exit 1.
  if (error instanceof CliError || (error instanceof AppError && error.status < 500) || (error as Error)?.name === 'ConfigError') {
    process.stderr.write(`error: ${(error as Error).message}\n`)
    process.exitCode = 2
  } else {
    process.stderr.write(`error: ${(error as Error)?.message ?? String(error)}\n`)
    process.exitCode = 1
  }
}
process.exit()
