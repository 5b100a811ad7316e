/**
 * A stale process sharing the port through SO_REUSEPORT must not silently take traffic: without
 * REUSE_PORT=1 the API refuses to start on a port another process holds; with it, it shares.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { freePort, ROOT, run } from '../helpers/processes'

let stale: ReturnType<typeof Bun.serve> | undefined
afterEach(() => {
  stale?.stop(true)
  stale = undefined
})

/** What an older instance started with SO_REUSEPORT looks like from the port. */
async function staleInstance(): Promise<number> {
  const port = await freePort()
  stale = Bun.serve({ port, hostname: '0.0.0.0', reusePort: true, fetch: () => new Response('stale') })
  return port
}

describe('REUSE_PORT start-up guard', () => {
  test('the port already served by another instance → one line naming it and REUSE_PORT, exit 1', async () => {
    const port = await staleInstance()
    for (const entry of ['api/index.ts', 'main.ts']) {
      const r = await run(['run', entry], { PORT: String(port), QUEUE_PREFIX: `reuse-port-${port}` })
      expect(r.code).toBe(1)
      expect(r.stderr.trim()).toBe(
        `port ${port} is already in use (another instance of this service, or another program): stop ` +
          `it, choose another PORT, or set REUSE_PORT=1 to share the port with other instances on purpose`,
      )
    }
  })

  test('REUSE_PORT=1 shares the port on purpose: the API starts beside the other instance and stops cleanly', async () => {
    const port = await staleInstance()
    const proc = Bun.spawn(['bun', 'run', 'api/index.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), REUSE_PORT: '1', LOG_LEVEL: 'info', QUEUE_PREFIX: `reuse-port-${port}` },
      stdout: 'pipe',
      stderr: 'pipe',
      stdin: 'ignore',
    })
    const reader = proc.stdout.getReader()
    let out = ''
    while (!out.includes('"msg":"api listening"')) {
      const { value, done } = await reader.read()
      if (done) break
      out += new TextDecoder().decode(value)
    }
    expect(out).toContain(`"msg":"api listening","process":"api","port":${port}`)
    // The kernel spreads new connections over both sockets: some reach the API.
    const answeredBy = new Set<string>()
    for (let i = 0; i < 400 && !(answeredBy.has('api') && answeredBy.has('stale')) && proc.exitCode === null; i++) {
      const body = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { connection: 'close' } }).then(
        (r) => r.text(),
        () => '',
      )
      if (body === 'stale') answeredBy.add('stale')
      else if (body.includes('"status":"ok"')) answeredBy.add('api')
    }
    expect([...answeredBy].sort()).toEqual(['api', 'stale'])
    proc.kill('SIGTERM')
    expect(await proc.exited).toBe(0)
  })
})
