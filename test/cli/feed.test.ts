import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { createPublished } from '../helpers/properties'

// Each test spawns the CLI as a real process, some several times: seconds each on a loaded machine.
setDefaultTimeout(60_000)

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

const cli = async (...args: string[]) => {
  const proc = Bun.spawn(['bun', 'run', 'cli/index.ts', 'feed', ...args], {
    cwd: `${import.meta.dir}/../..`,
    env: { ...process.env, PUBLIC_URL: 'https://api.example.com' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

describe('bun run cli feed', () => {
  test('create prints one JSON object with the URL; list shows it; revoke removes it', async () => {
    const created = await cli('create', '--business', String(biz.id), '--format', 'kyero', '--json')
    expect(created.code, created.stderr).toBe(0)
    const feed = JSON.parse(created.stdout)
    expect(feed).toEqual({ id: expect.any(Number), url: expect.stringMatching(/^https:\/\/api\.example\.com\/feeds\/[A-Za-z0-9_-]{43}\/kyero\.xml$/) })
    const second = JSON.parse((await cli('create', '--business', String(biz.id), '--format', 'kyero', '--json')).stdout)
    expect(second.url).not.toBe(feed.url)
    const listed = JSON.parse((await cli('list', '--business', String(biz.id), '--json')).stdout)
    expect(listed.feeds.map((f: { id: number }) => f.id).sort()).toEqual([feed.id, second.id].sort())
    expect(listed.feeds.find((f: { id: number }) => f.id === feed.id)).toEqual({ id: feed.id, url: feed.url, format: 'kyero', created_at: expect.any(String) })
    const revoked = await cli('revoke', String(feed.id), '--json')
    expect(revoked.code, revoked.stderr).toBe(0)
    expect(JSON.parse(revoked.stdout)).toEqual({ id: feed.id, revoked: true })
    expect(JSON.parse((await cli('list', '--business', String(biz.id), '--json')).stdout).feeds.map((f: { id: number }) => f.id)).toEqual([second.id])
  })

  test('export writes the very XML the feed URL serves: to stdout, or to a file with a JSON summary', async () => {
    const shop = await seedBusiness(ctx)
    for (let i = 0; i < 3; i++) await createPublished(ctx, shop.apiKey)
    const { url } = JSON.parse((await cli('create', '--business', String(shop.id), '--format', 'kyero', '--json')).stdout)
    const served = await ctx.app.handle(new Request(`http://localhost${new URL(url).pathname}`))
    expect(served.status).toBe(200)
    const xml = await served.text()
    expect(xml.match(/<property>/g)).toHaveLength(3)

    const toStdout = await cli('export', '--business', String(shop.id), '--format', 'kyero')
    expect(toStdout.code, toStdout.stderr).toBe(0)
    expect(toStdout.stdout).toBe(xml)
    expect(toStdout.stderr).toBe(`exported the kyero feed of business ${shop.id}: 3 properties, ${Buffer.byteLength(xml)} bytes\n`)

    const file = join(tmpdir(), `feed-export-${shop.id}.xml`)
    try {
      const toFile = await cli('export', '--business', String(shop.id), '--format', 'kyero', '--output', file, '--json')
      expect(toFile.code, toFile.stderr).toBe(0)
      expect(JSON.parse(toFile.stdout)).toEqual({ business_id: shop.id, format: 'kyero', properties: 3, bytes: Buffer.byteLength(xml), output: file })
      expect(readFileSync(file, 'utf8')).toBe(xml)
    } finally {
      rmSync(file, { force: true })
    }
    const json = await cli('export', '--business', String(shop.id), '--format', 'kyero', '--json')
    expect(json.code).toBe(2)
    expect(json.stderr).toBe('error: feed export --json needs --output <file>: stdout holds the JSON summary\n')
  })

  test('mistakes are one line on stderr: exit 2 for the command line, 1 for what is not found', async () => {
    const cases: [string[], number][] = [
      [['create', '--business', '999999999', '--format', 'kyero'], 1],
      [['create', '--business', String(biz.id), '--format', 'idealista'], 2],
      [['revoke', '999999999'], 1],
      [['revoke'], 2],
      [['export', '--business', '999999999', '--format', 'kyero'], 1],
    ]
    for (const [args, code] of cases) {
      const r = await cli(...args)
      expect(r.code, args.join(' ')).toBe(code)
      expect(r.stderr.trim().split('\n')[0]).toStartWith('error: ')
      expect(r.stdout).toBe('')
    }
  })
})
