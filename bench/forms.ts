/**
 * `bun run bench forms [--duration 10] [--rounds 2] [--connections 64] [--port 3170] [--api-processes N]
 *   [--only secret|publishable] [--cpu-prof DIR]`
 *
 * What a publishable key costs on the ingest hot path (contract §16): POST /v1/leads/ingest at
 * `--connections` keep-alive connections (closed loop) with a secret key, and the same with a
 * publishable key from one of its origins (its limits set high, so nothing is refused: the origin
 * check and the limiter are paid, nothing else), alternating `--rounds` times (the first kind of a
 * round changes every round: secret first in odd rounds, publishable first in even ones) in the same run
 * against the same API processes (the real server, api/server.ts, SO_REUSEPORT). Goal: the
 * publishable rate ≥ 0.9× the secret one.
 *
 * The limiter's Redis round trips per request: Redis's own counters (INFO: commands processed,
 * and read events, i.e. client writes it received) per request, the secret-key phases' figure
 * taken from the publishable ones' (the ingest's own queue traffic is in both); the API's
 * /metrics confirm every publishable request was checked. Data goes to the bench database
 * (DATABASE_URL's name + `_bench`, or BENCH_DATABASE_URL) under a fresh business and queue
 * prefix, both removed at the end (the queue after every phase: no workers run here).
 *
 * `--only` runs one kind (no ratio: for a profile of it); `--cpu-prof DIR` starts the API
 * processes under `bun --cpu-prof --cpu-prof-md` writing to DIR, to see where a kind's CPU goes.
 */
import { randomBytes } from 'node:crypto'
import { availableParallelism } from 'node:os'
import postgres from 'postgres'
import { parseFlags } from './flags'
import { Http1Pool, prepareRequest } from './http1-client'
import { cpuSeconds, load1 } from './load'
import { migrateDatabase } from '../db/migrate'
import { insertKey } from '../db/queries/api-keys'
import { generateApiKey } from '../shared/access/api-key-format'
import { getConfig, loadConfig } from '../shared/platform/config'
import { createLogger } from '../shared/platform/logger'
import { redisConnection } from '../shared/platform/queues'

const f = parseFlags(process.argv.slice(2))
const num = (name: string, fallback: number) => (f.flags[name] === undefined ? fallback : Number(f.flags[name]))
const ORIGIN = 'https://landing.example.com'
const HIGH = '999999999/s'

function benchUrl(): string {
  if (process.env.BENCH_DATABASE_URL) return process.env.BENCH_DATABASE_URL
  const u = new URL(getConfig().databaseUrl)
  u.pathname = `/${decodeURIComponent(u.pathname.slice(1))}_bench`
  return u.toString()
}

async function serveApi() {
  const { startApi } = await import('../api/server')
  await startApi(getConfig(), createLogger('error'))
  process.on('SIGTERM', () => process.exit(0))
  console.log('ready')
}

function spawnApi(env: Record<string, string>, profileDir: string | undefined) {
  const profile = profileDir ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${profileDir}`] : []
  const child = Bun.spawn(['bun', ...profile, import.meta.path, '--serve-api'], {
    env: { ...process.env, ...env, LOG_LEVEL: 'error', REUSE_PORT: '1' },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const ready = (async () => {
    const reader = child.stdout.getReader()
    let text = ''
    while (!text.includes('ready')) {
      const { value, done } = await reader.read()
      if (done) throw new Error('API process exited before it was ready')
      text += new TextDecoder().decode(value)
    }
    reader.releaseLock()
  })()
  return {
    ready,
    pid: child.pid,
    stop: async () => {
      child.kill()
      await child.exited
    },
  }
}

let phoneSeq = 0
const phoneBase = 10_000_000 + Math.floor(Math.random() * 80_000_000)
function payload(): string {
  const phone = `+346${String((phoneBase + phoneSeq++) % 100_000_000).padStart(8, '0')}`
  return JSON.stringify({
    id: `f${phoneSeq}`,
    createdAt: '2026-11-01T10:00:00Z',
    source: 'bench-forms',
    sourcePage: `${ORIGIN}/alquiler`,
    contact: { name: 'Bench Lead', phone },
    search: { budget: '700-900', habs: '2' },
  })
}

async function closedLoop(url: URL, headers: Record<string, string>, connections: number, seconds: number) {
  let ok = 0
  let failed = 0
  let firstError: string | undefined
  const lat: number[] = []
  const start = performance.now()
  const end = start + seconds * 1000
  await Promise.all(
    Array.from({ length: connections }, async () => {
      const pool = new Http1Pool(url)
      try {
        while (performance.now() < end) {
          const t = performance.now()
          try {
            const res = await pool.send(prepareRequest('POST', url, headers, payload()))
            lat.push(performance.now() - t)
            if (res.status === 200) ok++
            else {
              failed++
              firstError ??= `${res.status} ${res.body.slice(0, 200)}`
            }
          } catch (error) {
            failed++
            firstError ??= String(error)
          }
        }
      } finally {
        pool.close()
      }
    }),
  )
  const sorted = Float64Array.from(lat).sort()
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
  return { ok, failed, firstError, seconds: (performance.now() - start) / 1000, p50: pct(50), p99: pct(99) }
}

async function main() {
  const seconds = num('duration', 10)
  const rounds = num('rounds', 2)
  const connections = num('connections', 64)
  const port = num('port', 3170)
  const processes = Math.max(1, num('api-processes', availableParallelism()))
  const url = benchUrl()
  const prefix = `bench-forms-${randomBytes(3).toString('hex')}`
  const config = loadConfig({ ...process.env, DATABASE_URL: url, QUEUE_PREFIX: prefix })
  console.log(
    `bench database ${new URL(url).pathname.slice(1)}; queue prefix ${prefix}; ${connections} ` +
      `connections; ${rounds} rounds of ${seconds} s per kind; ${processes} API process(es)`,
  )
  await migrateDatabase(url)
  const sql = postgres(url, { max: 2, onnotice: () => {} })
  const redis = redisConnection(config, 'worker')
  const [business] = await sql<{ id: number }[]>`insert into businesses (name) values (${`bench-forms ${prefix}`}) returning id`
  const { drizzle } = await import('drizzle-orm/postgres-js')
  const db = drizzle(sql) as never
  const secret = generateApiKey('secret')
  const pub = generateApiKey('publishable')
  await insertKey(db, {
    businessId: business.id,
    keyId: secret.keyId,
    secretHash: secret.secretHash,
    name: 'bench secret',
    scopes: ['leads:ingest'],
    expiresAt: null,
  })
  await insertKey(db, {
    businessId: business.id,
    keyId: pub.keyId,
    secretHash: pub.secretHash,
    name: 'bench publishable',
    scopes: ['leads:ingest'],
    expiresAt: null,
    kind: 'publishable',
    origins: [ORIGIN],
    ratePerIp: HIGH,
    rate: HIGH,
  })
  const profileDir = typeof f.flags['cpu-prof'] === 'string' ? f.flags['cpu-prof'] : undefined
  const apis = Array.from({ length: processes }, () => spawnApi({ DATABASE_URL: url, QUEUE_PREFIX: prefix, PORT: String(port) }, profileDir))
  const only = (['secret', 'publishable'] as const).find((k) => k === f.flags.only)
  const order = only ? [only] : (['secret', 'publishable'] as const)
  const target = new URL(`http://127.0.0.1:${port}/v1/leads/ingest`)
  const kinds = {
    secret: { 'content-type': 'application/json', 'x-api-key': secret.apiKey },
    publishable: { 'content-type': 'application/json', 'x-api-key': pub.apiKey, origin: ORIGIN },
  }
  const redisStats = async () => {
    const info = await redis.info('stats')
    const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1])
    return { commands: field('total_commands_processed'), reads: field('total_reads_processed') }
  }
  const clearQueue = async () => {
    const keys = await redis.keys(`${prefix}:*`)
    for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000))
  }
  const apiCpu = () => apis.reduce((sum, a) => sum + cpuSeconds(a.pid), 0)
  const totals = {
    secret: { ok: 0, seconds: 0, cpu: 0, commands: 0, reads: 0, failed: 0, p50: [] as number[], p99: [] as number[] },
    publishable: { ok: 0, seconds: 0, cpu: 0, commands: 0, reads: 0, failed: 0, p50: [] as number[], p99: [] as number[] },
  }
  try {
    await Promise.all(apis.map((a) => a.ready))
    for (const kind of order) await closedLoop(target, kinds[kind], connections, Math.min(2, seconds / 4))
    await clearQueue()
    for (let round = 1; round <= rounds; round++) {
      // ABBA: the kind that goes first changes every round, so a drift of the machine's load
      // during a run weighs on both kinds alike (an even --rounds balances it exactly).
      for (const kind of round % 2 === 1 ? order : [...order].reverse()) {
        const before = await redisStats()
        const cpuBefore = apiCpu()
        const run = await closedLoop(target, kinds[kind], connections, seconds)
        const cpu = apiCpu() - cpuBefore
        const after = await redisStats()
        await clearQueue()
        const t = totals[kind]
        t.ok += run.ok
        t.failed += run.failed
        t.seconds += run.seconds
        t.cpu += cpu
        t.commands += after.commands - before.commands
        t.reads += after.reads - before.reads
        t.p50.push(run.p50)
        t.p99.push(run.p99)
        console.log(
          `round ${round} ${kind.padEnd(11)} ${(run.ok / run.seconds).toFixed(0).padStart(7)} req/s  p50 ${run.p50.toFixed(2)} ` +
            `ms  p99 ${run.p99.toFixed(2)} ms  API CPU ${((cpu / run.ok) * 1e6).toFixed(0)} µs/request  Redis ` +
            `per request: ${((after.commands - before.commands) / run.ok).toFixed(3)} commands, ${((after.reads - before.reads) / run.ok).toFixed(3)} ` +
            `reads${run.failed ? `  (${run.failed} failed, first: ${run.firstError})` : ''}`,
        )
      }
    }
    if (only) {
      console.log(`\nload average ${load1()}; ${only} only: no ratio`)
      return
    }
    const metrics = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text())
    const checks = Number(/^rate_limit_checks_total (\d+)$/m.exec(metrics)?.[1])
    const fallbacks = Number(/^rate_limit_fallbacks_total (\d+)$/m.exec(metrics)?.[1])
    const rate = (k: keyof typeof totals) => totals[k].ok / totals[k].seconds
    const per = (k: keyof typeof totals, field: 'commands' | 'reads') => totals[k][field] / totals[k].ok
    const ratio = rate('publishable') / rate('secret')
    console.log('')
    console.log(
      `machine: ${availableParallelism()} cores, load average ${load1()}; POST /v1/leads/ingest, ${connections} ` +
        `connections, ${processes} API process(es), ${rounds} × ${seconds} s per kind`,
    )
    console.log(`secret key       ${rate('secret').toFixed(0).padStart(7)} req/s`)
    console.log(`publishable key  ${rate('publishable').toFixed(0).padStart(7)} req/s  (origin ${ORIGIN}, limits ${HIGH} per address and per key)`)
    console.log(`publishable / secret: ${ratio.toFixed(3)}× (goal ≥ 0.9×): ${ratio >= 0.9 ? 'met' : 'NOT met'}`)
    const cpuPer = (k: keyof typeof totals) => (totals[k].cpu / totals[k].ok) * 1e6
    // On a machine shared with other work the rates move with the neighbours; the API's own CPU per
    // request does not, and the rate it allows when the API is the bottleneck is its inverse.
    console.log(
      `API CPU per request: secret ${cpuPer('secret').toFixed(0)} µs, publishable ${cpuPer('publishable').toFixed(0)} ` +
        `µs; secret / publishable: ${(cpuPer('secret') / cpuPer('publishable')).toFixed(3)}×`,
    )
    // The limiter's share is what a publishable request adds to a secret one; a difference below
    // zero is the two kinds' noise (the ingest's own batches), so it reads as none.
    const added = (what: 'commands' | 'reads') => Math.max(0, per('publishable', what) - per('secret', what)).toFixed(3)
    console.log(
      `limiter's Redis per publishable request (added to a secret key's): ${added('commands')} ` +
        `commands, ${added('reads')} round trips (Redis read events); ` +
        `the ingest's own: ${per('secret', 'commands').toFixed(3)} commands, ${per('secret', 'reads').toFixed(3)} round trips`,
    )
    console.log(
      `one API process's /metrics: rate_limit_checks_total ${checks}, rate_limit_fallbacks_total ${fallbacks}; ` +
        `failed requests: secret ${totals.secret.failed}, publishable ${totals.publishable.failed}`,
    )
  } finally {
    await Promise.all(apis.map((a) => a.stop()))
    await clearQueue()
    await sql`delete from businesses where id = ${business.id}`
    redis.disconnect()
    await sql.end({ timeout: 2 })
  }
}

if (f.flags['serve-api']) await serveApi()
else {
  await main()
  process.exit(0)
}
