/**
 * Long work shows progress on stderr when stderr is a terminal, and only then; the result stays
 * one JSON object on stdout with --json. The terminal is a real pseudo-terminal from util-linux
 * `script`, as an operator's shell would give.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestContext, seedBusiness, type TestContext } from '../helpers/context'
import { makeFailedJobs } from '../helpers/failed-jobs'
import { ROOT, run } from '../helpers/processes'
import { createPublished } from '../helpers/properties'

// Each test spawns the CLI as a real process, some several times: seconds each on a loaded machine.
setDefaultTimeout(60_000)

let ctx: TestContext
let dir: string
beforeAll(async () => {
  ctx = await createTestContext()
  dir = mkdtempSync(join(tmpdir(), 'cli-terminal-'))
})
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  await ctx.close()
})

const env = () => ({ QUEUE_PREFIX: ctx.config.queuePrefix })
const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`

/** Runs the CLI with stderr on a pseudo-terminal; stdout goes to a file when `stdoutFile` is given. */
async function inTerminal(args: string[], stdoutFile?: string): Promise<{ code: number; terminal: string; stdout: string }> {
  const command = ['bun', 'run', 'cli/index.ts', ...args].map(shellQuote).join(' ') + (stdoutFile ? ` > ${shellQuote(stdoutFile)}` : '')
  const proc = Bun.spawn(['script', '-qec', command, '/dev/null'], {
    cwd: ROOT,
    env: { ...process.env, ...env() },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [terminal, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
  return { code, terminal, stdout: stdoutFile ? readFileSync(stdoutFile, 'utf8') : '' }
}

/** The progress lines as drawn: each one replaces the last ("\r" and erase line). */
const progressLines = (terminal: string) =>
  terminal
    .split('\r\x1b[2K')
    .slice(1)
    .map((l) => l.replace(/\r?\n[\s\S]*$/, ''))

describe('progress of long work', () => {
  test('catalogue reindex: progress on a terminal, one JSON object on stdout; nothing on a pipe', async () => {
    const biz = await seedBusiness(ctx)
    for (let i = 0; i < 3; i++) await createPublished(ctx, biz.apiKey)
    const args = ['catalogue', 'reindex', '--business', String(biz.id), '--batch-size', '1']

    const out = join(dir, 'reindex.json')
    const json = await inTerminal([...args, '--json'], out)
    expect(json.code, json.terminal).toBe(0)
    expect(progressLines(json.terminal).map((l) => l.replace(/ in [\d.]+ s$/, ''))).toEqual([
      'catalogue reindex: 1/3 properties (1 published, 0 drafts)',
      'catalogue reindex: 2/3 properties (2 published, 0 drafts)',
      'catalogue reindex: 3/3 properties (3 published, 0 drafts)',
    ])
    expect(json.stdout.trim().split('\n')).toHaveLength(1)
    expect(JSON.parse(json.stdout)).toMatchObject({ business_id: biz.id, properties: 3, published: 3, drafts: 0 })

    // Text: the progress line is ended before the summary, so the two never share a line.
    const text = await inTerminal(args)
    expect(text.code, text.terminal).toBe(0)
    expect(text.terminal).toMatch(
      /catalogue reindex: 3\/3 properties \(3 published, 0 drafts\) in [\d.]+ s\r?\nreindexed 3 properties \(3 published, 0 drafts\) in [\d.]+ s/,
    )

    const piped = await run(['run', 'cli/index.ts', ...args, '--json'], env())
    expect(piped.code, piped.stderr).toBe(0)
    expect(piped.stderr).toBe('')
    expect(JSON.parse(piped.stdout)).toMatchObject({ properties: 3 })
  })

  test('feed export: progress on a terminal while the file is written, then the summary', async () => {
    const biz = await seedBusiness(ctx)
    for (let i = 0; i < 2; i++) await createPublished(ctx, biz.apiKey)
    const xml = join(dir, 'feed.xml')
    const r = await inTerminal(['feed', 'export', '--business', String(biz.id), '--format', 'kyero', '--output', xml])
    expect(r.code, r.terminal).toBe(0)
    expect(progressLines(r.terminal)).toEqual([expect.stringMatching(/^feed export: 2\/2 properties, [\d.]+ MB$/)])
    expect(r.terminal).toContain(`exported the kyero feed of business ${biz.id}: 2 properties`)
    expect(readFileSync(xml, 'utf8').match(/<property>/g)).toHaveLength(2)
  })

  test('queues retry --all: progress per job on a terminal, then the summary', async () => {
    await makeFailedJobs(ctx, 'catalogue-reindex', 3)
    const out = join(dir, 'retry.json')
    const json = await inTerminal(['queues', 'retry', '--queue', 'catalogue-reindex', '--all', '--json'], out)
    expect(json.code, json.terminal).toBe(0)
    expect(progressLines(json.terminal)).toEqual([
      'queues retry catalogue-reindex: 1/3 jobs',
      'queues retry catalogue-reindex: 2/3 jobs',
      'queues retry catalogue-reindex: 3/3 jobs',
    ])
    expect(json.stdout.trim().split('\n')).toHaveLength(1)
    expect(JSON.parse(json.stdout)).toMatchObject({ queue: 'catalogue-reindex', retried: 3, skipped: [] })

    // Another queue: a failing worker there would fail the jobs just retried again.
    await makeFailedJobs(ctx, 'storage-cleanup', 2)
    const piped = await run(['run', 'cli/index.ts', 'queues', 'drop', '--queue', 'storage-cleanup', '--all'], env())
    expect(piped.code, piped.stderr).toBe(0)
    expect(piped.stderr).toBe('')
    expect(piped.stdout).toBe('dropped 2 failed jobs of storage-cleanup\n')
  })
})
