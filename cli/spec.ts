/**
 * The command table's vocabulary. Every group, command, flag and operand is declared once here
 * in data; the parser, the help pages and the shell completions are all derived from it, so they
 * cannot drift apart.
 *
 * A command's `run` imports the capability it uses when it runs: loading them all (sharp,
 * BullMQ, the S3 client, the database driver) would cost every invocation, `--help` and each
 * usage error included, most of a second.
 */
import { UsageError } from './errors'
import type { CliContext } from './io'

export { CliError, UsageError } from './errors'

export interface OptionSpec<T = unknown> {
  /** Placeholder shown in help (`<id>`); a flag without one is a switch. */
  value?: string
  help: string
  required?: boolean
  /** The closed set of values: validated by the parser, offered by completion. */
  choices?: readonly string[]
  /** Completion offers file names for the value. */
  file?: boolean
  /** Turns the raw text into the value the command gets; throws UsageError naming the flag. */
  parse?: (raw: string, flag: string) => T
}

export interface OperandSpec<T = unknown> {
  name: string
  help: string
  choices?: readonly string[]
  parse?: (raw: string) => T
}

type ValueOf<O> = O extends { parse: (raw: string, flag: string) => infer T }
  ? T
  : O extends { choices: readonly (infer C)[] }
    ? C
    : O extends { value: string }
      ? string
      : boolean
type Presence<O, V> = O extends { value: string } ? (O extends { required: true } ? V : V | undefined) : V

export type ArgsOf<Os, P> = { -readonly [K in keyof Os]: Presence<Os[K], ValueOf<Os[K]>> } & {
  json: boolean
  operand: P extends { parse: (raw: string) => infer T } ? T : P extends { choices: readonly (infer C)[] } ? C : P extends OperandSpec ? string : undefined
}

interface CommandBase<Os, P> {
  summary: string
  /** Longer help: when to use it, what it prints. */
  description?: string
  options: Os
  operand?: P
  /** Rules between flags (one of two, not both): checked with the parsing, before any service. */
  check?(args: ArgsOf<Os, P>): void
}

/** Talks to the stores: gets a context with the configuration and an open database. */
interface ServiceCommand<Os, P> extends CommandBase<Os, P> {
  run(args: ArgsOf<Os, P>, ctx: CliContext): Promise<void>
}

/** Needs no service at all: returns what to print on stdout. */
interface OfflineCommand<Os, P> extends CommandBase<Os, P> {
  print(args: ArgsOf<Os, P>, groups: readonly Group[]): string
}

/** A command as the table keeps it, its argument types erased. */
export interface Command {
  summary: string
  description?: string
  options: Record<string, OptionSpec>
  operand?: OperandSpec
  check?(args: Record<string, unknown>): void
  run?(args: Record<string, unknown>, ctx: CliContext): Promise<void>
  print?(args: Record<string, unknown>, groups: readonly Group[]): string
}

export interface Group {
  name: string
  summary: string
  commands: Record<string, Command>
  /** The command run when none is named (`queues` alone shows the figures). */
  defaultCommand?: string
}

export function command<const Os extends Record<string, OptionSpec>, const P extends OperandSpec | undefined = undefined>(
  spec: ServiceCommand<Os, P> | OfflineCommand<Os, P>,
): Command {
  return spec as unknown as Command
}

/** Flags every command takes, beside its own. */
export const COMMON_OPTIONS: Record<string, OptionSpec> = {
  json: { help: 'print exactly one JSON object on stdout' },
  help: { help: 'print this help and exit' },
}

/** A flag the command's `check` requires in this case: missing here, it is a bug in `check`, not a usage error. */
export function checked<T>(value: T | undefined, flag: string): T {
  if (value === undefined) throw new Error(`--${flag} is missing although check() requires it`)
  return value
}

// Value parsers shared by the commands.

export function positiveInt(raw: string, flag: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2_147_483_647) throw new UsageError(`${flag} must be a positive integer, got "${raw}"`)
  return Number(raw)
}

/** `--business <id>`, which most commands take. */
export const businessFlag = { value: '<id>', required: true, help: 'the business', parse: positiveInt } as const
