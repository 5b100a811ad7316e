/**
 * From argv to what to do, using the command table only: no module here touches a service, so
 * help, version, completion and every usage error are answered before any connection is made.
 * Flags are parsed by `node:util` parseArgs in strict mode; when it refuses, the same arguments
 * are read again as tokens to name the offending flag in our words (and suggest the one meant),
 * rather than relaying its message text.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { closest } from './closest'
import { COMMON_OPTIONS, UsageError, type Command, type Group, type OptionSpec } from './spec'

export const PROGRAM = 'bun run cli'

export type Invocation = { kind: 'help'; level: HelpLevel } | { kind: 'version' } | { kind: 'run'; command: Command; args: Record<string, unknown> }

export type HelpLevel = { group?: Group; name?: string; command?: Command }

const TOP_OPTIONS: Record<string, OptionSpec> = {
  help: COMMON_OPTIONS.help,
  version: { help: 'print the version and exit' },
}

/** `--help` or `-h` anywhere (before `--`) asks for help: the operator wants to read, not run. */
function wantsHelp(args: string[]): boolean {
  const end = args.indexOf('--')
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h')
}

const didYouMean = (typed: string, known: readonly string[], show: (s: string) => string = (s) => s) => {
  const near = closest(typed, known)
  return near ? `; did you mean ${show(near)}?` : ''
}

export function resolve(argv: string[], groups: readonly Group[]): Invocation {
  const [first, ...rest] = argv
  if (first === undefined) throw new UsageError(`missing command; "${PROGRAM} --help" lists them`)
  if (first.startsWith('-')) {
    const values = parseFlags(argv, TOP_OPTIONS, false, PROGRAM)
    if (values.version) return { kind: 'version' }
    return { kind: 'help', level: {} }
  }
  const group = groups.find((g) => g.name === first)
  if (!group)
    throw new UsageError(
      `unknown command "${first}"${didYouMean(
        first,
        groups.map((g) => g.name),
        (s) => `"${s}"`,
      )} ("${PROGRAM} --help" lists them)`,
    )

  const [second] = rest
  if (second === '--help' || second === '-h') return { kind: 'help', level: { group } }
  let name: string
  let args: string[]
  if (second !== undefined && Object.hasOwn(group.commands, second)) {
    name = second
    args = rest.slice(1)
  } else if (group.defaultCommand && (second === undefined || second.startsWith('-'))) {
    name = group.defaultCommand
    args = rest
  } else {
    const names = Object.keys(group.commands)
    if (second === undefined)
      throw new UsageError(`missing command: ${PROGRAM} ${group.name} ${names.join('|')} ("${PROGRAM} ${group.name} --help" tells more)`)
    if (second.startsWith('-')) throw new UsageError(`${second} before a command: ${PROGRAM} ${group.name} ${names.join('|')} [flags]`)
    throw new UsageError(`unknown command "${group.name} ${second}"${didYouMean(second, names, (s) => `"${group.name} ${s}"`)} (known: ${names.join(', ')})`)
  }
  const command = group.commands[name]
  const path = `${group.name} ${name}`
  if (wantsHelp(args)) return { kind: 'help', level: { group, name, command } }
  return { kind: 'run', command, args: commandArgs(args, command, path) }
}

function commandArgs(argv: string[], command: Command, path: string): Record<string, unknown> {
  const specs = { ...command.options, ...COMMON_OPTIONS }
  const values = parseFlags(argv, specs, command.operand !== undefined, path)
  const out: Record<string, unknown> = { json: values.json === true }
  for (const [name, spec] of Object.entries(command.options)) {
    const raw = values[name]
    const flag = `--${name}`
    if (spec.value === undefined) {
      out[name] = raw === true
      continue
    }
    if (raw === undefined) {
      if (spec.required) throw new UsageError(`${path} needs ${flag} ${spec.value}`)
      continue
    }
    out[name] = convert(raw as string, flag, spec)
  }
  const positionals = values._ as string[]
  if (command.operand) {
    const { operand } = command
    if (positionals.length === 0) throw new UsageError(`${path} needs <${operand.name}>`)
    if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}" for ${path} (it takes one <${operand.name}>)`)
    out.operand = convert(positionals[0], `<${operand.name}>`, operand)
  }
  command.check?.(out)
  return out
}

function convert(raw: string, flag: string, spec: Pick<OptionSpec, 'choices' | 'parse'>): unknown {
  if (spec.choices && !spec.choices.includes(raw))
    throw new UsageError(`${flag} must be one of ${spec.choices.join(', ')}, got "${raw}"${didYouMean(raw, spec.choices)}`)
  return spec.parse ? spec.parse(raw, flag) : raw
}

type Values = Record<string, string | boolean | string[] | undefined> & { _: string[] }

function parseFlags(args: string[], specs: Record<string, OptionSpec>, allowPositionals: boolean, path: string): Values {
  const options: ParseArgsConfig['options'] = {}
  for (const [name, spec] of Object.entries(specs)) {
    options[name] = { type: spec.value === undefined ? 'boolean' : 'string', ...(name === 'help' ? { short: 'h' } : {}) }
  }
  try {
    const { values, positionals } = parseArgs({ args, options, strict: true, allowPositionals })
    return { ...values, _: positionals } as Values
  } catch (error) {
    throw new UsageError(explain(args, options, specs, allowPositionals, path) ?? `${path}: ${(error as Error).message.split('\n')[0]}`)
  }
}

/** Names what strict parsing refused, reading the arguments as tokens. */
function explain(
  args: string[],
  options: ParseArgsConfig['options'],
  specs: Record<string, OptionSpec>,
  allowPositionals: boolean,
  path: string,
): string | undefined {
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true })
  const known = Object.keys(specs)
  const flagList = known.map((k) => `--${k}`).join(', ')
  for (const token of tokens) {
    if (token.kind === 'positional' && !allowPositionals) return `unexpected argument "${token.value}" for ${path} (it takes only flags: ${flagList})`
    if (token.kind !== 'option') continue
    const spec = specs[token.name]
    if (!spec) {
      const near = closest(token.name, known)
      return `unknown flag ${token.rawName} for ${path}${near ? `; did you mean --${near}?` : ` (known: ${flagList})`}`
    }
    if (spec.value === undefined && token.value !== undefined) return `--${token.name} takes no value, got "${token.value}"`
    if (spec.value !== undefined && (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))) {
      const got = token.value === undefined ? '' : ` (got the flag "${token.value}"; write --${token.name}=${token.value} if that is the value)`
      return `--${token.name} needs a value ${spec.value}${got}`
    }
  }
  return undefined
}
