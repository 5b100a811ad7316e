/** Shared CLI plumbing: flag parsing, `--json` output (exactly one object on stdout), errors. */
import { createDatabase, type Database } from '../db/client'
import { getConfig, type Config } from '../shared/platform/config'
import { describeConnectionError } from '../shared/platform/service-errors'

export class CliError extends Error {
  override name = 'CliError'
}

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

export function stringFlag(f: Flags, name: string, required: true): string
export function stringFlag(f: Flags, name: string, required?: false): string | undefined
export function stringFlag(f: Flags, name: string, required = false): string | undefined {
  const v = f.flags[name]
  if (v === undefined) {
    if (required) throw new CliError(`--${name} is required`)
    return undefined
  }
  if (v === true) throw new CliError(`--${name} needs a value`)
  return v
}

export function intFlag(f: Flags, name: string, required: true): number
export function intFlag(f: Flags, name: string, required?: false): number | undefined
export function intFlag(f: Flags, name: string, required = false): number | undefined {
  const v = stringFlag(f, name, required as false)
  if (v === undefined) return undefined
  const n = Number(v)
  if (!Number.isInteger(n) || n < 1) throw new CliError(`--${name} must be a positive integer, got "${v}"`)
  return n
}

export interface CliContext {
  config: Config
  database: Database
  json: boolean
  /** Result: printed as one JSON object with --json, else as readable text. */
  out(result: unknown, text?: string): void
  /** Progress for long commands: stderr, so `--json` stdout stays one object. */
  progress(line: string): void
}

export async function openDatabase(config: Config): Promise<Database> {
  const database = createDatabase(config.databaseUrl, { max: 4, directUrl: config.databaseDirectUrl })
  try {
    await database.sql`select 1`
  } catch (error) {
    await database.close(1).catch(() => {})
    throw new CliError(describeConnectionError('PostgreSQL', config.databaseUrl, error))
  }
  return database
}

export async function makeContext(json: boolean): Promise<CliContext> {
  const config = getConfig()
  const database = await openDatabase(config)
  return {
    config,
    database,
    json,
    out(result, text) {
      process.stdout.write(json ? JSON.stringify(result) + '\n' : (text ?? JSON.stringify(result, null, 2)) + '\n')
    },
    progress(line) {
      process.stderr.write(line + '\n')
    },
  }
}
