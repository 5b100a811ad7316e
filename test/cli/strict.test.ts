/**
 * The command line as an operator meets it: help at every level, strict flags with a suggestion,
 * exit codes 0/1/2. Help, version, completion and usage errors must not touch a service: the
 * stores are pointed at a port that counts every connection made to it, and must count none.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createServer, type Server } from 'node:net'
import { freePort, run } from '../helpers/processes'

// Each test spawns the CLI as a real process, some several times: seconds each on a loaded machine.
setDefaultTimeout(60_000)

let listener: Server
let connections = 0
let storesUrl: Record<string, string>
beforeAll(async () => {
  const port = await freePort()
  listener = createServer((socket) => {
    connections++
    socket.destroy()
  })
  await new Promise<void>((resolve) => listener.listen(port, '127.0.0.1', resolve))
  storesUrl = { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/nowhere`, REDIS_URL: `redis://127.0.0.1:${port}` }
})
afterAll(() => listener.close())

const cli = (...args: string[]) => run(['run', 'cli/index.ts', ...args], storesUrl)

/** A command that must answer on its own: nothing connected to the stores while it ran. */
async function offline(...args: string[]) {
  const before = connections
  const r = await cli(...args)
  expect(connections - before, `${args.join(' ')} connected to a store`).toBe(0)
  return r
}

describe('help at every level', () => {
  const levels: [string[], string][] = [
    [['--help'], 'usage: bun run cli <group> <command> [flags]'],
    [['-h'], 'usage: bun run cli <group> <command> [flags]'],
    [['key', '--help'], 'usage: bun run cli key <command> [flags]'],
    [['queues', '-h'], 'usage: bun run cli queues <command> [flags]'],
    [
      ['key', 'create', '--help'],
      'usage: bun run cli key create --business <id> [--scopes <s1,s2,...>] [--publishable] [--origins <o1,o2,...>] ' +
        '[--rate-per-ip <N/s|N/min|N/h>] [--rate <N/s|N/min|N/h>] [--name <name>] [--expires-at <ISO 8601>] [--json]',
    ],
    // After flags, even required ones missing or an unknown one: the operator wants to read.
    [['catalogue', 'reindex', '--business', '1', '--help'], 'usage: bun run cli catalogue reindex [--business <id>] [--batch-size <n>] [--json]'],
    [['catalogue', 'reindex', '-h'], 'usage: bun run cli catalogue reindex'],
    [['queues', 'retry', '--all', '--bogus', '-h'], 'usage: bun run cli queues retry --queue <name> [--id <job id>] [--all] [--json]'],
    [['queues', '--json', '--help'], 'usage: bun run cli queues [--json]'],
    [['completion', 'bash', '--help'], 'usage: bun run cli completion bash'],
  ]
  for (const [args, usage] of levels) {
    test(`${args.join(' ')}: that level's help on stdout, exit 0, no service touched`, async () => {
      const r = await offline(...args)
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toBe('')
      expect(r.stdout.split('\n')[0]).toStartWith(usage)
    })
  }

  test('the top level lists every group and the exit codes; a group lists its commands; a command its flags', async () => {
    const top = (await offline('--help')).stdout
    for (const group of ['business', 'key', 'outreach', 'watermark', 'catalogue', 'feed', 'webhooks', 'events', 'queues', 'completion'])
      expect(top).toMatch(new RegExp(`^  ${group} `, 'm'))
    expect(top).toContain('2  usage error')
    const key = (await offline('key', '--help')).stdout
    for (const command of ['create', 'revoke', 'list']) expect(key).toMatch(new RegExp(`^  ${command} `, 'm'))
    const create = (await offline('key', 'create', '--help')).stdout
    for (const flag of ['--business <id>', '--scopes <s1,s2,...>', '--name <name>', '--expires-at <ISO 8601>', '--json', '-h, --help'])
      expect(create).toContain(flag)
  })

  test('--version prints the package version', async () => {
    const { version } = await Bun.file(`${import.meta.dir}/../../package.json`).json()
    const r = await offline('--version')
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe(`${version}\n`)
  })
})

describe('usage errors: exit 2, one line on stderr naming the mistake, nothing done', () => {
  const cases: [string[], string][] = [
    [
      ['key', 'create', '--business', '1', '--scopes', 'leads:read', '--expire-at', '2027-01-01T00:00:00Z'],
      'error: unknown flag --expire-at for key create; did you mean --expires-at?',
    ],
    [['key', 'create', '--business', '1', '--scopes', 'leads:read', '--nmae', 'web'], 'error: unknown flag --nmae for key create; did you mean --name?'],
    [['catalogue', 'reindex', '--batchsize', '10'], 'error: unknown flag --batchsize for catalogue reindex; did you mean --batch-size?'],
    [['key', 'create', '--scopes', 'leads:read', '--business'], 'error: --business needs a value <id>'],
    [['key', 'create', '--business', '--scopes', 'leads:read'], 'error: --business needs a value <id>'],
    [['key', 'create', '--scopes', 'leads:read'], 'error: key create needs --business <id>'],
    [['key', 'create', '--business', 'one', '--scopes', 'leads:read'], 'error: --business must be a positive integer, got "one"'],
    [['key', 'list', '--business', '1', '--json=yes'], 'error: --json takes no value, got "yes"'],
    [['key', 'revoke'], 'error: key revoke needs <key_id>'],
    [['key', 'revoke', 'a', 'b'], 'error: unexpected argument "b" for key revoke'],
    [['business', 'create', 'Sol'], 'error: unexpected argument "Sol" for business create'],
    [['kye', 'list'], 'error: unknown command "kye"; did you mean "key"?'],
    [['key', 'lsit'], 'error: unknown command "key lsit"; did you mean "key list"?'],
    [['key'], 'error: missing command: bun run cli key create|origins|revoke|list'],
    [['key', '--business', '1', 'list'], 'error: --business before a command: bun run cli key create|origins|revoke|list [flags]'],
    [[], 'error: missing command'],
    // contract §16.1: publishable keys.
    [['key', 'create', '--business', '1'], 'error: key create needs --scopes <s1,s2,...> (or --publishable --origins <o1,o2,...> for a publishable key)'],
    [
      ['key', 'create', '--business', '1', '--publishable', '--scopes', 'leads:ingest', '--origins', 'https://a.example'],
      'error: key create --publishable takes no --scopes',
    ],
    [['key', 'create', '--business', '1', '--publishable'], 'error: key create --publishable needs --origins'],
    [['key', 'create', '--business', '1', '--scopes', 'leads:ingest', '--origins', 'https://a.example'], 'error: --origins is for publishable keys'],
    [['key', 'create', '--business', '1', '--scopes', 'leads:ingest', '--rate', '10/min'], 'error: --rate is for publishable keys'],
    [
      ['key', 'create', '--business', '1', '--publishable', '--origins', 'http://landing.example'],
      'error: --origins: origin "http://landing.example" uses http://',
    ],
    [
      ['key', 'create', '--business', '1', '--publishable', '--origins', 'https://landing.example/form'],
      'error: --origins: origin "https://landing.example/form" has a path',
    ],
    [
      ['key', 'create', '--business', '1', '--publishable', '--origins', 'https://*.example.com'],
      'error: --origins: origin "https://*.example.com" has a wildcard',
    ],
    [
      ['key', 'create', '--business', '1', '--publishable', '--origins', Array.from({ length: 21 }, (_, i) => `https://s${i}.example`).join(',')],
      'error: --origins: at most 20 origins, got 21',
    ],
    [
      ['key', 'create', '--business', '1', '--publishable', '--origins', 'https://a.example', '--rate-per-ip', '10/day'],
      'error: --rate-per-ip: rate "10/day" must be N/s, N/min or N/h',
    ],
    [
      ['key', 'create', '--business', '1', '--publishable', '--origins', 'https://a.example', '--rate', '0/s'],
      'error: --rate: rate "0/s" must be N/s, N/min or N/h',
    ],
    [['key', 'origins', 'k1'], 'error: key origins needs --set <o1,o2,...>'],
    [['key', 'origins', 'k1', '--set', 'ftp://a.example'], 'error: --set: origin "ftp://a.example" is not http(s)'],
    [['feed', 'create', '--business', '1', '--format', 'kyro'], 'error: --format must be one of kyero, got "kyro"; did you mean kyero?'],
    [['queues', 'retry', '--queue', 'outreach'], 'error: queues retry needs exactly one of --id <job id> or --all'],
    [['completion', 'fish'], 'error: unknown command "completion fish"'],
  ]
  for (const [args, message] of cases) {
    test(args.join(' ') || '(no arguments)', async () => {
      const r = await offline(...args)
      expect(r.code, r.stderr).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr.endsWith('\n') && r.stderr.trim().split('\n').length === 1, r.stderr).toBe(true)
      expect(r.stderr).toStartWith(message)
    })
  }
})

describe('failures at run time: exit 1, one line', () => {
  test('PostgreSQL unreachable (a closed port)', async () => {
    const closed = await freePort()
    const r = await run(['run', 'cli/index.ts', 'key', 'list', '--business', '1', '--json'], {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/nowhere`,
    })
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toContain('PostgreSQL is not reachable')
  })

  test('help does not need the stores either when nothing listens at all', async () => {
    const closed = await freePort()
    const r = await run(['run', 'cli/index.ts', 'catalogue', 'reindex', '--help'], {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/nowhere`,
      REDIS_URL: `redis://127.0.0.1:${closed}`,
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toStartWith('usage: bun run cli catalogue reindex')
  })
})
