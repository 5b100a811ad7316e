/**
 * APP_SECRET with real processes (contract §15, §7): outside development and test a missing APP_SECRET stops every
 * entry point with one line naming it, while `bun run start` on a developer machine (no NODE_ENV,
 * no APP_SECRET) still starts, warning that it runs on the development value.
 */
import { describe, expect, test } from 'bun:test'
import { eventually } from '../helpers/eventually'
import { freePort, ROOT, run } from '../helpers/processes'

/** The test runner's environment without the two variables under test. */
function envWithout(...names: string[]): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !names.includes(k)) env[k] = v
  return env
}

describe('APP_SECRET at start-up', () => {
  test('api, worker and main refuse to start in production without it: one line naming it, exit 1', async () => {
    for (const entry of ['api/index.ts', 'worker/index.ts', 'main.ts']) {
      const proc = Bun.spawn(['bun', 'run', entry], {
        cwd: ROOT,
        env: { ...envWithout('APP_SECRET'), NODE_ENV: 'production', PORT: String(await freePort()) },
        stdout: 'pipe',
        stderr: 'pipe',
        stdin: 'ignore',
      })
      const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
      expect(code, entry).toBe(1)
      const lines = stderr.trim().split('\n')
      expect(lines, entry).toHaveLength(1)
      expect(lines[0], entry).toStartWith('APP_SECRET is required unless NODE_ENV is development or test (NODE_ENV is "production")')
    }
  })

  test('a short secret is refused even in development', async () => {
    const r = await run(['run', 'api/index.ts'], { NODE_ENV: 'development', APP_SECRET: 'short', PORT: String(await freePort()) })
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toBe('APP_SECRET must be at least 32 characters, got 5')
  })

  test('`bun run start` with no NODE_ENV and no APP_SECRET starts on the development value and says so', async () => {
    const port = await freePort()
    const proc = Bun.spawn(['bun', 'run', 'start'], {
      cwd: ROOT,
      env: { ...envWithout('APP_SECRET', 'NODE_ENV'), PORT: String(port), QUEUE_PREFIX: `app-secret-${port}`, LOG_LEVEL: 'info' },
      stdout: 'pipe',
      stderr: 'pipe',
      stdin: 'ignore',
    })
    try {
      const ready = await eventually(
        async () =>
          proc.exitCode !== null
            ? 'exited'
            : (await fetch(`http://127.0.0.1:${port}/readyz`).then(
                (r) => r.status === 200,
                () => false,
              )) && 'ready',
        { timeoutMs: 20_000, intervalMs: 50, what: 'bun run start to be ready' },
      )
      if (ready === 'exited') throw new Error(`bun run start exited ${proc.exitCode}: ${await new Response(proc.stderr).text()}`)
      proc.kill('SIGTERM')
      expect(await proc.exited).toBe(0)
      const out = await new Response(proc.stdout).text()
      expect(out).toContain('APP_SECRET is not set: using the development value')
    } finally {
      proc.kill('SIGKILL')
    }
  }, 40_000)
})
