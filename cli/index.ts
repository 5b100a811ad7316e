/**
 * `bun run cli <group> <command> [flags]`: the operator CLI (contract §1). The command table
 * (cli/commands/index.ts) drives parsing, help and completion. Exit codes, as docs/cli.md and
 * `--help` document them: 0 success, 1 failure at run time, 2 usage error.
 */
import { GROUPS } from './commands'
import { helpText } from './help'
import { resolve } from './parse'
import { UsageError } from './spec'

async function main(argv: string[]): Promise<number> {
  const invocation = resolve(argv, GROUPS)
  if (invocation.kind === 'help') {
    process.stdout.write(helpText(invocation.level, GROUPS))
    return 0
  }
  if (invocation.kind === 'version') {
    const { version } = (await Bun.file(new URL('../package.json', import.meta.url)).json()) as { version: string }
    process.stdout.write(`${version}\n`)
    return 0
  }
  const { command, args } = invocation
  if (command.print) {
    process.stdout.write(command.print(args, GROUPS))
    return 0
  }
  const { makeContext } = await import('./io')
  if (!command.run) throw new Error('a command has neither print nor run')
  const ctx = await makeContext(args.json === true)
  try {
    await command.run(args, ctx)
    return 0
  } finally {
    await ctx.close()
  }
}

try {
  process.exitCode = await main(process.argv.slice(2))
} catch (error) {
  // Only the command line's own mistakes are usage errors (nothing was done). A refusal at run
  // time (unknown business, job not failed, configuration invalid, a store unreachable) is 1.
  const message = error instanceof Error ? error.message : String(error)
  process.stderr.write(`error: ${message.split('\n')[0]}\n`)
  process.exitCode = error instanceof UsageError ? 2 : 1
}
process.exit()
