/**
 * `cli completion bash|zsh`: the scripts parse, and bash really completes every group, command
 * and flag of the command table (driven through COMP_WORDS/COMP_CWORD as bash's `complete`
 * would), so a command added to the table is completed without touching the scripts.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GROUPS } from '../../cli/commands'
import { COMMON_OPTIONS } from '../../cli/spec'
import { run } from '../helpers/processes'

// Each test spawns the CLI as a real process, some several times: seconds each on a loaded machine.
setDefaultTimeout(60_000)

let dir: string
let bashScript: string
let zshScript: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cli-completion-'))
  const [bash, zsh] = await Promise.all([run(['run', 'cli/index.ts', 'completion', 'bash']), run(['run', 'cli/index.ts', 'completion', 'zsh'])])
  expect(bash.code, bash.stderr).toBe(0)
  expect(zsh.code, zsh.stderr).toBe(0)
  bashScript = join(dir, 'cli.bash')
  zshScript = join(dir, 'cli.zsh')
  writeFileSync(bashScript, bash.stdout)
  writeFileSync(zshScript, zsh.stdout)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`

/** Completes each command line (its last word being the one under the cursor) in one bash; one answer per line. */
async function complete(lines: string[][], cwd = dir): Promise<string[][]> {
  const calls = lines.map((words) => `t ${words.map(shellQuote).join(' ')}`).join('\n')
  const program = `source ${shellQuote(bashScript)}
t() { COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _property_lead_cli; echo "\${COMPREPLY[*]}"; }
${calls}
`
  const proc = Bun.spawn(['bash', '--norc', '--noprofile', '-c', program], { cwd, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  expect(code, stderr).toBe(0)
  expect(stderr).toBe('')
  return stdout
    .split('\n')
    .slice(0, lines.length)
    .map((l) => (l ? l.split(' ') : []))
}

const flagsOf = (group: (typeof GROUPS)[number], name: string) => {
  const command = group.commands[name]
  return [...Object.keys(command.options), ...Object.keys(COMMON_OPTIONS).filter((f) => f === 'help' || !command.print)].map((f) => `--${f}`)
}

describe('bash completion', () => {
  test('the script is valid bash and is registered for bun', async () => {
    const proc = Bun.spawn(['bash', '-n', bashScript], { stdout: 'pipe', stderr: 'pipe' })
    expect(await proc.exited, await new Response(proc.stderr).text()).toBe(0)
    expect(await Bun.file(bashScript).text()).toContain('complete -o default -F _property_lead_cli bun')
  })

  test('completes groups, commands (from a prefix) and every flag of every command of the table', async () => {
    const lines: string[][] = [['bun', 'run', 'cli', '']]
    const expected: string[][] = [[...GROUPS.map((g) => g.name), '--help', '--version']]
    for (const group of GROUPS) {
      for (const name of Object.keys(group.commands)) {
        lines.push(['bun', 'run', 'cli', group.name, name.slice(0, 2)])
        expected.push(Object.keys(group.commands).filter((c) => c.startsWith(name.slice(0, 2))))
        lines.push(['bun', 'run', 'cli', group.name, ...(name === group.defaultCommand ? [] : [name]), '--'])
        expected.push(flagsOf(group, name))
      }
    }
    expect(await complete(lines)).toEqual(expected)
  })

  test('completes a subcommand, a flag from its prefix and the values of a closed flag; files for --file', async () => {
    writeFileSync(join(dir, 'logo.png'), '')
    expect(
      await complete([
        ['bun', 'run', 'cli', 'key', 'cr'],
        ['bun', 'run', 'cli', 'key', 'create', '--business', '1', '--exp'],
        ['bun', 'run', 'cli', 'feed', 'create', '--format', ''],
        ['bun', 'run', 'cli', 'queues', 'retry', '--queue', 'out'],
        ['bun', 'run', 'cli', 'watermark', 'set', '--file', 'lo'],
        ['bun', 'run', 'cli', 'completion', ''],
        // Not `bun run cli`: left to bun's default (file names), nothing from this script.
        ['bun', 'install', ''],
      ]),
    ).toEqual([['create'], ['--expires-at'], ['kyero'], ['outreach'], ['logo.png'], ['bash', 'zsh', '--help'], []])
  })
})

describe('zsh completion', () => {
  test('names every group, command and flag of the table and registers for bun', async () => {
    const text = await Bun.file(zshScript).text()
    expect(text).toStartWith('#compdef bun\n')
    expect(text).toContain('compdef _property_lead_cli bun')
    for (const group of GROUPS) {
      expect(text).toContain(`'${group.name}:`)
      for (const name of Object.keys(group.commands)) {
        expect(text).toContain(`'${name}:`)
        for (const flag of flagsOf(group, name)) expect(text).toContain(`'${flag}:`)
      }
    }
  })

  test.skipIf(!Bun.which('zsh'))('the script is valid zsh', async () => {
    const proc = Bun.spawn(['zsh', '-n', zshScript], { stdout: 'pipe', stderr: 'pipe' })
    expect(await proc.exited, await new Response(proc.stderr).text()).toBe(0)
  })
})
