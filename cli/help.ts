/** The help pages of every level (program, group, command), written from the command table. */
import { PROGRAM, type HelpLevel } from './parse'
import { COMMON_OPTIONS, type Command, type Group, type OptionSpec } from './spec'

export const EXIT_CODES = `exit codes:
  0  success
  1  failure at run time: configuration invalid, PostgreSQL or Redis unreachable, not found, refused
  2  usage error: unknown command or flag, missing or malformed value (nothing was done)`

function table(rows: [string, string][]): string {
  const width = Math.max(...rows.map(([left]) => left.length))
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`.trimEnd()).join('\n')
}

const flagLabel = (name: string, spec: OptionSpec) => `--${name}${spec.value ? ` ${spec.value}` : ''}`
/** In tables long flags line up under the long form of `-h, --help`. */
const flagCell = (name: string, spec: OptionSpec) => `${name === 'help' ? '-h, ' : '    '}${flagLabel(name, spec)}`
const sentence = (s: string) => `${s[0].toUpperCase()}${s.slice(1)}.`

/** One line of synopsis: required flags bare, optional ones in brackets. */
export function synopsis(group: Group, name: string, command: Command): string {
  const words = [PROGRAM, group.name]
  if (name !== group.defaultCommand) words.push(name)
  if (command.operand) words.push(`<${command.operand.name}>`)
  for (const [flag, spec] of Object.entries(command.options)) {
    const label = flagLabel(flag, spec)
    words.push(spec.required ? label : `[${label}]`)
  }
  if (!command.print) words.push('[--json]')
  return words.join(' ')
}

function topHelp(groups: readonly Group[]): string {
  return `usage: ${PROGRAM} <group> <command> [flags]
       ${PROGRAM} <group> --help            a group's commands
       ${PROGRAM} <group> <command> --help  a command's flags

The operator CLI of the property and lead API: workspaces, API keys, feeds, queues.

groups:
${table(groups.map((g) => [g.name, g.summary]))}

flags:
${table(Object.entries({ help: COMMON_OPTIONS.help, version: { help: 'print the version and exit' } }).map(([n, s]) => [flagCell(n, s), s.help]))}

${EXIT_CODES}
`
}

function groupHelp(group: Group): string {
  const rows = Object.entries(group.commands).map(([name, c]): [string, string] => [name === group.defaultCommand ? `${name} (default)` : name, c.summary])
  return `usage: ${PROGRAM} ${group.name} <command> [flags]

${sentence(group.summary)}

commands:
${table(rows)}

"${PROGRAM} ${group.name} <command> --help" shows a command's flags.
`
}

function commandHelp(group: Group, name: string, command: Command): string {
  const own = Object.entries(command.options).map(([flag, spec]): [string, string] => {
    const notes = [spec.choices ? `one of: ${spec.choices.join(', ')}` : '', spec.required ? 'required' : ''].filter(Boolean)
    return [flagCell(flag, spec), `${spec.help}${notes.length ? ` (${notes.join('; ')})` : ''}`]
  })
  const common = Object.entries(COMMON_OPTIONS)
    .filter(([flag]) => flag === 'help' || !command.print)
    .map(([flag, spec]): [string, string] => [flagCell(flag, spec), spec.help])
  const operand: [string, string][] = command.operand ? [[`<${command.operand.name}>`, command.operand.help]] : []
  return `usage: ${synopsis(group, name, command)}

${sentence(command.summary)}${command.description ? `\n\n${command.description}` : ''}
${operand.length ? `\narguments:\n${table(operand)}\n` : ''}
flags:
${table([...own, ...common])}
`
}

export function helpText(level: HelpLevel, groups: readonly Group[]): string {
  if (level.group && level.command && level.name) return commandHelp(level.group, level.name, level.command)
  if (level.group) return groupHelp(level.group)
  return topHelp(groups)
}
