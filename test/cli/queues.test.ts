import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createTestContext, type TestContext } from '../helpers/context'
import { makeFailedJobs } from '../helpers/failed-jobs'
import { QUEUE_NAMES } from '../../shared/platform/queue-names'

// Each test spawns the CLI as a real process, some several times: seconds each on a loaded machine.
setDefaultTimeout(60_000)

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

const cli = async (...args: string[]) => {
  const proc = Bun.spawn(['bun', 'run', 'cli/index.ts', 'queues', ...args], {
    cwd: `${import.meta.dir}/../..`,
    env: { ...process.env, QUEUE_PREFIX: ctx.config.queuePrefix },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}
const figures = async () => {
  const r = await cli('--json')
  expect(r.code, r.stderr).toBe(0)
  return Object.fromEntries((JSON.parse(r.stdout).queues as any[]).map((q) => [q.queue, q]))
}

describe('bun run cli queues', () => {
  test('prints waiting, active, delayed, failed and completed per queue (table and --json)', async () => {
    await ctx.deps.queues.enqueue('catalogue-reindex', { propertyId: 1 })
    await ctx.deps.queues.enqueue('catalogue-reindex', { propertyId: 2 }, { delay: 60_000 })
    await makeFailedJobs(ctx, 'upload-complete', 2)
    const q = await figures()
    // Every queue of the catalog, in its order (the five of contract §7 first, then version 1.1's).
    expect(Object.keys(q)).toEqual([...QUEUE_NAMES])
    expect(Object.keys(q).slice(0, 5)).toEqual(['lead-ingest', 'upload-complete', 'image-watermark', 'catalogue-reindex', 'outreach'])
    expect(q['catalogue-reindex']).toMatchObject({ waiting: 1, active: 0, delayed: 1, failed: 0, completed: 0 })
    expect(q['upload-complete']).toMatchObject({ waiting: 0, failed: 2, processed_failed: 2 })
    const text = await cli()
    expect(text.code, text.stderr).toBe(0)
    const lines = text.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^queue\s+waiting\s+active\s+delayed\s+failed\s+completed/)
    expect(lines.find((l) => l.startsWith('catalogue-reindex'))).toMatch(/^catalogue-reindex\s+1\s+0\s+1\s+0\s+0\b/)
    expect(lines).toHaveLength(1 + QUEUE_NAMES.length)
  })

  test('retry --id puts one failed job back to waiting with its attempts reset', async () => {
    const [first, second] = await makeFailedJobs(ctx, 'image-watermark', 2)
    const r = await cli('retry', '--queue', 'image-watermark', '--id', first, '--json')
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({ queue: 'image-watermark', retried: 1, ids: [first], skipped: [] })
    const q = ctx.deps.queues.get('image-watermark')
    const job = (await q.getJob(first))!
    expect(await job.getState()).toBe('waiting')
    expect(job.attemptsMade).toBe(0)
    expect(await (await q.getJob(second))!.getState()).toBe('failed')
  })

  test('retry --all and drop --all act on every failed job and only on those', async () => {
    const ids = await makeFailedJobs(ctx, 'outreach', 3)
    const waiting = await ctx.deps.queues.get('outreach').add('test.wait', {})
    const dropped = await cli('drop', '--queue', 'outreach', '--id', ids[0], '--json')
    expect(JSON.parse(dropped.stdout).dropped).toBe(1)
    expect(await ctx.deps.queues.get('outreach').getJob(ids[0])).toBeUndefined()
    const retried = await cli('retry', '--queue', 'outreach', '--all', '--json')
    expect(retried.code, retried.stderr).toBe(0)
    expect(JSON.parse(retried.stdout)).toMatchObject({ retried: 2 })
    expect((await figures()).outreach).toMatchObject({ waiting: 3, failed: 0 })

    await makeFailedJobs(ctx, 'lead-ingest', 3)
    const all = await cli('drop', '--queue', 'lead-ingest', '--all')
    expect(all.code, all.stderr).toBe(0)
    expect(all.stdout.trim()).toBe('dropped 3 failed jobs of lead-ingest')
    expect((await figures())['lead-ingest']).toMatchObject({ failed: 0, waiting: 0 })
    expect(await (await ctx.deps.queues.get('outreach').getJob(waiting.id!))!.getState()).toBe('waiting')
  })

  test('refuses unknown queues, ambiguous selections and jobs that are not failed', async () => {
    const unknown = await cli('retry', '--queue', 'nope', '--all')
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('--queue must be one of lead-ingest,')
    expect(unknown.stderr).toContain('got "nope"')
    const both = await cli('drop', '--queue', 'outreach')
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('exactly one of --id <job id> or --all')
    const job = await ctx.deps.queues.get('catalogue-reindex').add('test.wait', {})
    const notFailed = await cli('drop', '--queue', 'catalogue-reindex', '--id', job.id!)
    expect(notFailed.code).toBe(1)
    expect(notFailed.stderr).toContain('is waiting, not failed')
    expect(await (await ctx.deps.queues.get('catalogue-reindex').getJob(job.id!))!.getState()).toBe('waiting')
    const missing = await cli('retry', '--queue', 'outreach', '--id', 'no-such-job')
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('no job no-such-job in outreach')
  })

  test('Redis unreachable is one clear line and a run-time failure (exit 1)', async () => {
    const proc = Bun.spawn(['bun', 'run', 'cli/index.ts', 'queues'], {
      cwd: `${import.meta.dir}/../..`,
      env: { ...process.env, REDIS_URL: 'redis://127.0.0.1:1' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
    expect(code).toBe(1)
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toContain('Redis is not reachable')
  })
})
