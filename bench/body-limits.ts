/**
 * `bun run bench body-limits [--clients 200] [--mib 50]`
 *
 * Bodies sent with `Transfer-Encoding: chunked` (no Content-Length) must not be buffered. The API
 * (`bun run start:api`, its own process, its own database: DATABASE_URL's name + `_bench`)
 * receives `clients` concurrent POSTs under /v1, each offering a `mib` MiB chunked body as fast
 * as the socket takes it; a client stops sending once it has an answer. Two phases:
 * anonymous (no key: every answer must be 401) and authenticated (a valid key: every answer must
 * be 413, the body cut at 1 MiB + 1 byte). Prints the service's RSS at idle, its peak during each
 * phase (sampled every 20 ms, and the kernel's VmHWM), the answers by status and the bytes the
 * clients managed to write. Goal (anonymous): peak RSS within 50 MB of idle, every answer 401;
 * authenticated: every answer 413, peak within 50 MB plus twice the 1 MiB (+ one chunk) each client may hold.
 */
import { MAX_JSON_BODY_BYTES } from '../api/request-body'
import { parseFlags } from './flags'
import { migrateDatabase } from '../db/migrate'
import { insertKey } from '../db/queries/api-keys'
import { createBusiness } from '../db/queries/businesses'
import { createDatabase } from '../db/client'
import { generateApiKey } from '../shared/access/api-key-format'
import { getConfig } from '../shared/platform/config'
import { SCOPES } from '../shared/access/scopes'
import { freePort } from '../test/helpers/processes'

const flags = parseFlags(process.argv.slice(2)).flags
const CLIENTS = Number(flags.clients ?? 200)
const BODY_BYTES = Number(flags.mib ?? 50) * 1024 * 1024
const CHUNK = Buffer.alloc(256 * 1024, 0x20)
const CHUNK_FRAME = Buffer.concat([Buffer.from(`${CHUNK.length.toString(16)}\r\n`), CHUNK, Buffer.from('\r\n')])

const config = getConfig()
const dbUrl = new URL(process.env.BENCH_DATABASE_URL ?? config.databaseUrl)
if (!process.env.BENCH_DATABASE_URL) dbUrl.pathname = `/${decodeURIComponent(dbUrl.pathname.slice(1))}_bench`
await migrateDatabase(dbUrl.toString())

const database = createDatabase(dbUrl.toString(), { max: 2 })
const business = await createBusiness(database.db, `bench-body-limits-${Date.now()}`)
const key = generateApiKey()
await insertKey(database.db, { businessId: business.id, keyId: key.keyId, secretHash: key.secretHash, name: 'bench', scopes: [...SCOPES], expiresAt: null })

const port = await freePort()
const child = Bun.spawn(['bun', new URL('../api/index.ts', import.meta.url).pathname], {
  env: { ...process.env, DATABASE_URL: dbUrl.toString(), PORT: String(port), LOG_LEVEL: 'error', QUEUE_PREFIX: `bench-body-${Date.now()}` },
  stdout: 'ignore',
  stderr: 'inherit',
})

async function memory(field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await Bun.file(`/proc/${child.pid}/status`)
    .text()
    .catch(() => '')
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN) * 1024
}
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`

for (let i = 0; ; i++) {
  const ok = await fetch(`http://127.0.0.1:${port}/healthz`)
    .then((r) => r.ok)
    .catch(() => false)
  if (ok) break
  if (i > 200) throw new Error('the API did not start')
  await Bun.sleep(50)
}
// Warm the paths once (JIT, key cache) so idle RSS is the steady state, not the cold start.
for (let i = 0; i < 20; i++) {
  await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { 'x-api-key': key.apiKey } }).then((r) => r.text())
  await fetch(`http://127.0.0.1:${port}/v1/leads`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }).then((r) => r.text())
}
await Bun.sleep(500)
Bun.gc(true)

interface Outcome {
  status: number
  written: number
}

/** One raw connection: headers, then chunks until the server answers or closes. */
function oneClient(headers: string): Promise<Outcome> {
  return new Promise((resolve) => {
    let written = 0
    let answered = false
    let received = ''
    const done = (status: number, socket?: { end(): void }) => {
      if (answered) return
      answered = true
      socket?.end()
      resolve({ status, written })
    }
    const pump = (socket: { write(data: Uint8Array): number }) => {
      while (!answered && written < BODY_BYTES) {
        const n = socket.write(CHUNK_FRAME)
        if (n <= 0) return
        written += n
        // A partial write: the rest is dropped, the server reads until it answers.
        if (n < CHUNK_FRAME.length) return
      }
      if (!answered && written >= BODY_BYTES) socket.write(Buffer.from('0\r\n\r\n'))
    }
    Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        open(socket) {
          socket.write(headers)
          pump(socket)
        },
        drain(socket) {
          pump(socket)
        },
        data(socket, chunk) {
          received += chunk.toString('latin1')
          const m = /^HTTP\/1\.1 (\d{3})/.exec(received)
          if (m) done(Number(m[1]), socket)
        },
        close() {
          done(0)
        },
        error() {
          done(0)
        },
      },
    }).catch(() => done(0))
  })
}

/** `allowance`: what the phase may legitimately hold, beyond the 50 MB margin (authenticated bodies up to the 1 MiB limit each). */
async function phase(name: string, apiKey: string | null, expected: number, allowance: number) {
  const headers = [
    'POST /v1/leads HTTP/1.1',
    `Host: 127.0.0.1:${port}`,
    'Content-Type: application/json',
    'Transfer-Encoding: chunked',
    ...(apiKey ? [`X-Api-Key: ${apiKey}`] : []),
    '',
    '',
  ].join('\r\n')
  const idle = await memory('VmRSS')
  let peak = idle
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await memory('VmRSS'))
      await Bun.sleep(20)
    }
  })()
  const started = performance.now()
  const outcomes = await Promise.all(Array.from({ length: CLIENTS }, () => oneClient(headers)))
  const seconds = (performance.now() - started) / 1000
  await Bun.sleep(200)
  sampling = false
  await sampler
  const after = await memory('VmRSS')
  const byStatus = new Map<number, number>()
  for (const o of outcomes) byStatus.set(o.status, (byStatus.get(o.status) ?? 0) + 1)
  const written = outcomes.reduce((s, o) => s + o.written, 0)
  const allExpected = (byStatus.get(expected) ?? 0) === CLIENTS
  const growth = peak - idle
  console.log(`\n${name}: ${CLIENTS} concurrent chunked POSTs offering ${mb(BODY_BYTES)} each, answered in ${seconds.toFixed(2)} s`)
  console.log(
    `  answers        ${[...byStatus].map(([s, n]) => `${s || 'closed'}: ${n}`).join(', ')}   (goal: all ${expected})  ${allExpected ? 'PASS' : 'FAIL'}`,
  )
  console.log(`  bytes written  ${mb(written)} by the clients in all (the kernel's socket buffers included)`)
  const bound = 50e6 + allowance
  console.log(
    `  API RSS        idle ${mb(idle)}, peak ${mb(peak)} (+${mb(growth)}), after ${mb(after)}   ` +
      `(goal: peak ≤ idle + ${mb(bound)})  ${growth <= bound ? 'PASS' : 'FAIL'}`,
  )
  return allExpected && growth <= bound
}

let passed = false
try {
  const anonymous = await phase('anonymous', null, 401, 0)
  // An authenticated client's body is held up to the limit while it is counted: its chunks, and
  // their joined copy for a body that fits, until the collector runs.
  const authenticated = await phase('authenticated', key.apiKey, 413, CLIENTS * 2 * (MAX_JSON_BODY_BYTES + CHUNK.length))
  console.log(`\nAPI peak RSS over the run (VmHWM): ${mb(await memory('VmHWM'))}`)
  passed = anonymous && authenticated
} finally {
  child.kill('SIGTERM')
  await child.exited
  await database.sql`delete from businesses where id = ${business.id}`
  await database.close()
}
process.exit(passed ? 0 : 1)
