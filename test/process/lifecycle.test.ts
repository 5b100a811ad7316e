import { describe, expect, test } from 'bun:test'
import { freePort, ROOT, run } from '../helpers/processes'

describe('start-up errors (contract §7)', () => {
  test('PostgreSQL unreachable → one clear line naming it and how to start it', async () => {
    const port = await freePort()
    const r = await run(['run', 'api/index.ts'], { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/x`, PORT: String(await freePort()) })
    expect(r.code).toBe(1)
    const lines = r.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain('PostgreSQL is not reachable')
    expect(lines[0]).toContain('DATABASE_URL')
  })

  test('a missing database → one line saying to run db:migrate', async () => {
    const r = await run(['run', 'api/index.ts'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/property_lead_never_created', PORT: String(await freePort()) })
    expect(r.code).toBe(1)
    const lines = r.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain('property_lead_never_created does not exist')
    expect(lines[0]).toContain('bun run db:migrate')
  })

  test('Redis unreachable → one clear line naming it', async () => {
    const r = await run(['run', 'worker/index.ts'], { REDIS_URL: `redis://127.0.0.1:${await freePort()}` })
    expect(r.code).toBe(1)
    const lines = r.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain('Redis is not reachable')
  })

  test('invalid configuration → one line naming the variable', async () => {
    const r = await run(['run', 'api/index.ts'], { PORT: 'eighty' })
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toBe('PORT must be an integer between 0 and 65535, got "eighty"')
    const q = await run(['run', 'worker/index.ts'], { WORKER_QUEUES: 'lead-ingest,nope' })
    expect(q.code).toBe(1)
    expect(q.stderr.trim()).toStartWith('WORKER_QUEUES names an unknown queue "nope"')
  })
})

describe('SIGTERM (contract §7)', () => {
  test('the API drains in-flight requests, then exits 0 within its bound', async () => {
    const port = await freePort()
    const proc = Bun.spawn(['bun', 'run', 'main.ts'], { cwd: ROOT, env: { ...process.env, PORT: String(port), QUEUE_PREFIX: `lifecycle-${port}`, LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: '5000' }, stdout: 'pipe', stderr: 'pipe' })
    try {
      const base = `http://127.0.0.1:${port}`
      const deadline = Date.now() + 15_000
      for (;;) {
        const ok = await fetch(`${base}/readyz`).then((r) => r.status === 200, () => false)
        if (ok) break
        if (Date.now() > deadline) throw new Error('service did not become ready')
        await Bun.sleep(50)
      }
      // The batch goes over kept-alive connections that a first round opened (the server has
      // accepted them), and the signal once the first answer is back: the server has then read
      // the batch, sent together, and the rest are in its handlers. A fixed 5 ms wait over new
      // connections raced the accept itself on a loaded machine: a connection still in the
      // listen backlog when the listener closes is reset (16 ECONNRESET once in CI).
      await Promise.all(Array.from({ length: 40 }, () => fetch(`${base}/readyz`).then((r) => r.arrayBuffer())))
      let firstAnswer!: () => void
      const answered = new Promise<void>((resolve) => (firstAnswer = resolve))
      const inflight = Array.from({ length: 40 }, () =>
        fetch(`${base}/readyz`).then(
          (r) => (firstAnswer(), r.status),
          (e) => (firstAnswer(), String(e)),
        ),
      )
      await answered
      const signalledAt = Date.now()
      proc.kill('SIGTERM')
      const statuses = await Promise.all(inflight)
      const code = await proc.exited
      expect(code).toBe(0)
      expect(Date.now() - signalledAt).toBeLessThan(10_000)
      expect(statuses.filter((s) => s !== 200)).toEqual([])
      const out = await new Response(proc.stdout).text()
      expect(out).toContain('"msg":"shutting down"')
      expect(out).toContain('"component":"api"')
      expect(out).toContain('"component":"workers"')
    } finally {
      proc.kill('SIGKILL')
    }
  })
})
