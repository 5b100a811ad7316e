/**
 * Crash handlers with real processes: an unhandled rejection or an uncaught exception is logged
 * with its context, the process stops being ready, drains what it had accepted and exits non-zero
 * (the supervisor restarts it) — never a silent zombie, never an abrupt cut. The failure is
 * injected by test/process/crash-inject.ts, preloaded into the real entry points.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect, type Socket } from 'node:net'
import { createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { uniquePhone } from '../helpers/leads'
import { freePort, ROOT } from '../helpers/processes'

let ctx: TestContext
let biz: SeededBusiness
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
})
afterAll(() => ctx.close())

interface Child {
  proc: ReturnType<typeof Bun.spawn>
  /** Everything written to stdout so far (JSON log lines). */
  out: () => string
  /** Resolves once stdout is closed: every line the process wrote is in `out`. */
  outEnded: Promise<void>
  logLines: () => Record<string, any>[]
}

function spawnEntry(entry: string, kind: 'rejection' | 'exception', env: Record<string, string> = {}): Child {
  const proc = Bun.spawn(['bun', '--preload', './test/process/crash-inject.ts', entry], {
    cwd: ROOT,
    env: { ...process.env, CRASH_KIND: kind, LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: '8000', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
  })
  let out = ''
  const outEnded = (async () => {
    const decoder = new TextDecoder()
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) out += decoder.decode(chunk, { stream: true })
  })()
  const logLines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
  return { proc, out: () => out, outEnded, logLines }
}

/** A keep-alive connection for sending several requests one after another. */
function keepAlive(port: number): Promise<{ socket: Socket; send: (head: string, body?: string) => Promise<{ status: number; body: string }> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      let buffer = ''
      let waiting: ((r: { status: number; body: string }) => void) | undefined
      socket.on('data', (d) => {
        buffer += d.toString('latin1')
        const end = buffer.indexOf('\r\n\r\n')
        if (end === -1) return
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(buffer.slice(0, end))?.[1] ?? 0)
        if (buffer.length < end + 4 + length) return
        const answer = { status: Number(buffer.split(' ')[1]), body: buffer.slice(end + 4, end + 4 + length) }
        buffer = buffer.slice(end + 4 + length)
        waiting?.(answer)
      })
      const send = (head: string, body = '') =>
        new Promise<{ status: number; body: string }>((r, j) => {
          waiting = r
          socket.once('close', () => j(new Error('connection closed')))
          socket.write(head + body)
        })
      resolve({ socket, send })
    })
    socket.on('error', reject)
  })
}

async function waitReady(port: number, child: Child): Promise<void> {
  await eventually(
    async () => {
      if (child.proc.exitCode !== null) throw new Error(`exited ${child.proc.exitCode}: ${await new Response(child.proc.stderr as ReadableStream).text()}`)
      return fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      )
    },
    { timeoutMs: 20_000, what: 'the API to be ready' },
  )
}

describe('crash handlers', () => {
  for (const kind of ['rejection', 'exception'] as const) {
    test(`API, ${kind}: logged with context, not ready, in-flight request drained, exit 1`, async () => {
      const port = await freePort()
      const child = spawnEntry('api/index.ts', kind, { PORT: String(port), QUEUE_PREFIX: `crash-${port}` })
      try {
        await waitReady(port, child)
        const probe = await keepAlive(port)
        expect((await probe.send('GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n')).status).toBe(200)
        // A request in flight: its headers and half of its body have arrived, the rest has not.
        const body = JSON.stringify({ name: 'Crash Test', phone: uniquePhone() })
        const inflight = await keepAlive(port)
        const answer = inflight.send(
          `POST /v1/leads HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${biz.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
          body.slice(0, 10),
        )
        // Both connections are served by the same event loop: once the probe's answer is back, the
        // in-flight request's head (sent first) has been read.
        expect((await probe.send('GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n')).status).toBe(200)
        probe.socket.destroy()

        child.proc.kill('SIGUSR2')
        const crashLine = await eventually(async () => child.logLines().find((l) => l.level === 'error' && /draining and exiting/.test(l.msg)), {
          what: 'the crash log line',
          timeoutMs: 5000,
        })
        expect(crashLine).toMatchObject({ process: 'api', kind: kind === 'rejection' ? 'unhandled rejection' : 'uncaught exception', pid: child.proc.pid })
        expect(crashLine.error.message).toBe(`injected ${kind === 'rejection' ? 'unhandled rejection' : 'uncaught exception'}`)
        expect(crashLine.error.stack).toContain('crash-inject.ts')

        // Still running: the accepted request is being drained. Not ready any more: /readyz
        // answers 503 until the listener closes, then the connection is refused.
        expect(child.proc.exitCode).toBeNull()
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          async (r) => `${r.status} ${((await r.json()) as { checks: { process?: string } }).checks.process}`,
          () => 'refused',
        )
        expect(['503 crashed', 'refused']).toContain(ready)

        inflight.socket.write(body.slice(10))
        const created = await answer
        expect(created.status, created.body).toBe(201)

        expect(await child.proc.exited).toBe(1)
        await child.outEnded
        // Exited once drained, not at the end of its bound (SHUTDOWN_TIMEOUT_MS 8000).
        expect(child.logLines().some((l) => l.msg === 'stopped' && l.component === 'api')).toBe(true)
        expect(child.logLines().filter((l) => /did not finish in time|exceeded its bound/.test(l.msg))).toEqual([])
        inflight.socket.destroy()
      } finally {
        child.proc.kill('SIGKILL')
      }
    }, 40_000)
  }

  test('worker process, rejection: logged, workers closed, exit 1', async () => {
    const child = spawnEntry('worker/index.ts', 'rejection', { QUEUE_PREFIX: `crash-worker-${process.pid}` })
    try {
      await eventually(async () => child.logLines().some((l) => l.msg === 'workers started'), { timeoutMs: 20_000, what: 'workers to start' })
      child.proc.kill('SIGUSR2')
      expect(await child.proc.exited).toBe(1)
      const lines = child.logLines()
      expect(lines.find((l) => l.level === 'error' && l.kind === 'unhandled rejection')).toMatchObject({
        process: 'worker',
        error: { message: 'injected unhandled rejection' },
      })
      expect(lines.some((l) => l.msg === 'stopped' && l.component === 'workers')).toBe(true)
    } finally {
      child.proc.kill('SIGKILL')
    }
  }, 40_000)

  test('a crash during a SIGTERM drain still exits non-zero', async () => {
    const port = await freePort()
    const child = spawnEntry('api/index.ts', 'rejection', { PORT: String(port), QUEUE_PREFIX: `crash-${port}` })
    try {
      await waitReady(port, child)
      const body = JSON.stringify({ name: 'Crash Test', phone: uniquePhone() })
      const inflight = await keepAlive(port)
      const answer = inflight.send(
        `POST /v1/leads HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${biz.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
        body.slice(0, 10),
      )
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
      child.proc.kill('SIGTERM')
      await eventually(async () => child.logLines().some((l) => l.msg === 'shutting down'), { what: 'the shutdown to start' })
      child.proc.kill('SIGUSR2')
      await eventually(async () => child.logLines().some((l) => l.kind === 'unhandled rejection' && l.already_stopping === true), {
        what: 'the crash log line',
      })
      inflight.socket.write(body.slice(10))
      expect((await answer).status).toBe(201)
      expect(await child.proc.exited).toBe(1)
      inflight.socket.destroy()
    } finally {
      child.proc.kill('SIGKILL')
    }
  }, 40_000)
})
