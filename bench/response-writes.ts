/**
 * `bun run bench response-writes [--requests 20000] [--clients 16] [--sizes 1000,15000,16500,77100]`:
 * what Bun.serve's CPU costs per answer by body size, answered synchronously and after an `await`.
 * A catalogue page is ~77 KB and always answered after an await (the database). Bun writes an
 * answer made after an await in one send() while status line, headers and body fit its 16 KB
 * cork buffer; past that, each piece of the status line and of every header is its own send()
 * (oven-sh/bun#41341, open): docs/performance.md "catalogue" says what this costs the API.
 *
 * A child process serves the API's header set (content type, request id, cache-control, nosniff)
 * and a body of each size; the load generator (bench/load.ts) runs here at `--clients` keep-alive
 * connections. Printed per size and way: answers/s, the server's user and system CPU per answer
 * (Linux /proc), and TCP segments sent per answer by the whole machine (/proc/net/snmp: both
 * ends of the loopback, requests and ACKs included), where the extra send() calls show.
 */
import { readFileSync } from 'node:fs'
import { parseFlags } from './flags'
import { prepareRequest } from './http1-client'
import { closedLoopHttp, ratePerSecond } from './load'

const HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }

/** Serves `/sync/N` and `/async/N` with a body of N bytes (the child's side). */
function serve(port: number): void {
  const bodies = new Map<number, Uint8Array>()
  const bodyOf = (n: number) => bodies.get(n) ?? bodies.set(n, new Uint8Array(n).fill(0x61)).get(n)!
  const answer = (n: number) => new Response(bodyOf(n), { headers: { ...HEADERS, 'x-request-id': crypto.randomUUID() } })
  const server = Bun.serve({
    port,
    hostname: '127.0.0.1',
    fetch(request) {
      const [, way, size] = new URL(request.url).pathname.split('/')
      const n = Number(size)
      if (way === 'sync') return answer(n)
      // A timer stands for the database: the answer is made outside the request's own event.
      return new Promise<Response>((resolve) => setTimeout(() => resolve(answer(n)), 0))
    },
  })
  console.log(`ready ${server.port}`)
}

/** User and system CPU seconds of a process (Linux /proc; 100 ticks a second). */
function cpuOf(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 }
}

/** TCP segments this machine has sent (both ends of a loopback connection count). */
function tcpSegmentsSent(): number {
  const lines = readFileSync('/proc/net/snmp', 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('Tcp:'))
  const names = lines[0].split(/\s+/)
  return Number(lines[1].split(/\s+/)[names.indexOf('OutSegs')])
}

async function main(): Promise<void> {
  const { flags } = parseFlags(process.argv.slice(2))
  if (flags.serve) return serve(Number(flags.port ?? 0))
  const requests = Number(flags.requests ?? 20000)
  const clients = Number(flags.clients ?? 16)
  const sizes = String(flags.sizes ?? '1000,15000,16500,77100')
    .split(',')
    .map(Number)
  if (!Number.isInteger(requests) || requests < 100) throw new Error('--requests must be an integer of at least 100')
  if (!Number.isInteger(clients) || clients < 1) throw new Error('--clients must be a positive integer')
  if (sizes.some((n) => !Number.isInteger(n) || n < 1 || n > 10_000_000)) throw new Error('--sizes takes byte counts from 1 to 10000000')

  const child = Bun.spawn(['bun', import.meta.path, '--serve', '--port', '0'], { stdout: 'pipe', stderr: 'inherit' })
  try {
    const reader = child.stdout.getReader()
    const first = new TextDecoder().decode((await reader.read()).value)
    const port = Number(/ready (\d+)/.exec(first)?.[1])
    if (!port) throw new Error(`the server did not start: ${first}`)
    console.log(`Bun ${Bun.version}, ${clients} clients, ${requests} answers per row; CPU of the serving process per answer`)
    console.log('body bytes   way      answers/s   user µs   system µs   TCP segments/answer')
    for (const size of sizes) {
      for (const way of ['sync', 'async']) {
        const url = new URL(`http://127.0.0.1:${port}/${way}/${size}`)
        const request = prepareRequest('GET', url, {}, '')
        // Warm-up: the connections, the body's allocation, the JIT.
        await closedLoopHttp(
          url,
          clients,
          Math.min(2000, requests),
          () => request,
          () => undefined,
        )
        const before = cpuOf(child.pid)
        const segments = tcpSegmentsSent()
        const run = await closedLoopHttp(
          url,
          clients,
          requests,
          () => request,
          (res) => (res.status === 200 ? undefined : `status ${res.status}`),
        )
        const after = cpuOf(child.pid)
        const perAnswer = (s: number) => ((s * 1e6) / run.ok).toFixed(0)
        console.log(
          `${String(size).padStart(10)}   ${way.padEnd(6)} ${ratePerSecond(run).toFixed(0).padStart(11)} ${perAnswer(after.user - before.user).padStart(9)} ` +
            `${perAnswer(after.system - before.system).padStart(11)} ${((tcpSegmentsSent() - segments) / run.ok).toFixed(1).padStart(21)}` +
            (run.failed ? `   ${run.failed} failed: ${run.firstError}` : ''),
        )
      }
    }
  } finally {
    child.kill()
  }
}

await main()
