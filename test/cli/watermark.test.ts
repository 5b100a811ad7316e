import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { findBusiness } from '../../db/queries/businesses'
import { createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'

// Each test spawns the CLI as a real process, some several times: seconds each on a loaded machine.
setDefaultTimeout(60_000)

let ctx: TestContext
let biz: SeededBusiness
let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'watermark-cli-'))
  ctx = await createTestContext({ DATA_DIR: dir, STORAGE_DRIVER: 'local' })
  biz = await seedBusiness(ctx)
})
afterAll(async () => {
  await ctx.close()
  await rm(dir, { recursive: true, force: true })
})

const cli = async (...args: string[]) => {
  const proc = Bun.spawn(['bun', 'run', 'cli/index.ts', ...args], {
    cwd: `${import.meta.dir}/../..`,
    env: { ...process.env, DATA_DIR: dir, STORAGE_DRIVER: 'local' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

describe('bun run cli watermark', () => {
  test('set stores the logo privately and records it; show and clear', async () => {
    const logo = join(dir, 'logo.png')
    await Bun.write(
      logo,
      await sharp({ create: { width: 200, height: 80, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 1 } } })
        .png()
        .toBuffer(),
    )
    const set = await cli('watermark', 'set', '--business', String(biz.id), '--file', logo, '--json')
    expect(set.code, set.stderr).toBe(0)
    expect(JSON.parse(set.stdout)).toEqual({ business_id: biz.id, watermark: 'image', width: 200, height: 80 })
    const key = (await findBusiness(ctx.deps.database.db, biz.id))!.watermarkKey!
    expect(key).toMatch(/^watermarks\/[0-9a-f]{32}\.png$/)
    expect((await sharp((await ctx.deps.storage.get('private', key))!).metadata()).format).toBe('png')

    const show = await cli('watermark', 'show', '--business', String(biz.id), '--json')
    expect(JSON.parse(show.stdout)).toEqual({ business_id: biz.id, watermark: 'image', text: null })

    const clear = await cli('watermark', 'clear', '--business', String(biz.id), '--json')
    expect(JSON.parse(clear.stdout)).toEqual({ business_id: biz.id, watermark: 'text', text: biz.name })
    expect((await findBusiness(ctx.deps.database.db, biz.id))!.watermarkKey).toBeNull()
    expect(await ctx.deps.storage.head('private', key)).toBeNull()
  })

  test('a file that is not an image, or too large, is a clear error', async () => {
    const bad = join(dir, 'bad.png')
    await Bun.write(bad, 'not an image')
    const r = await cli('watermark', 'set', '--business', String(biz.id), '--file', bad)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('--file is not a readable image')
    const big = join(dir, 'big.png')
    await Bun.write(
      big,
      await sharp({ create: { width: 2500, height: 10, channels: 3, background: '#000' } })
        .png()
        .toBuffer(),
    )
    const r2 = await cli('watermark', 'set', '--business', String(biz.id), '--file', big)
    expect(r2.code).toBe(1)
    expect(r2.stderr).toContain('at most 2000×2000')
    const missing = await cli('watermark', 'set', '--business', '2147483000', '--file', big)
    expect(missing.stderr).toContain('business 2147483000 does not exist')
  })
})
