/**
 * The benchmarks' loose `--name value` reader: scripts run by developers, where an unknown flag
 * is harmless (the operator CLI parses strictly, cli/parse.ts).
 */
export interface Flags {
  positional: string[]
  flags: Record<string, string | true>
}

export function parseFlags(args: string[]): Flags {
  const positional: string[] = []
  const flags: Record<string, string | true> = {}
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (a.startsWith('--')) {
      const eq = a.indexOf('=')
      if (eq !== -1) flags[a.slice(2, eq)] = a.slice(eq + 1)
      else if (i + 1 < args.length && !args[i + 1].startsWith('--')) flags[a.slice(2)] = args[++i]
      else flags[a.slice(2)] = true
    } else positional.push(a)
  }
  return { positional, flags }
}
