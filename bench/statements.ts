/**
 * `bun run bench statements [--seconds 5] [--clients 16]`: what a query with parameters costs as
 * an unnamed statement (`prepare: false`, ours, for transaction-mode poolers: Parse+Describe, wait
 * for the parameter types, then Bind+Execute) against a named prepared statement (`prepare: true`:
 * one round trip once prepared), and against the same values written into the statement as
 * literals (db/inline-values.ts, the catalogue's statements: no parameters, one round trip, still
 * unnamed). `select $1::int + $2, $3::text` from `--clients` concurrent loops on as many
 * connections to DATABASE_URL, `--seconds` each way; queries/s, p50, p95 and this process's CPU
 * per query (the driver's side).
 */
import postgres from 'postgres'
import { queryInlinedRaw } from '../db/inline-values'

const args = process.argv.slice(2)
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? fallback : Number(args[i + 1])
}
const seconds = flag('seconds', 5)
const clients = flag('clients', 16)
const url = process.env.DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/property_lead'

type Way = 'unnamed' | 'inline' | 'named'

async function measure(way: Way): Promise<{ rate: number; p50: number; p95: number; cpuUs: number }> {
  const sql = postgres(url, { max: clients, prepare: way === 'named', onnotice: () => {} })
  const text = 'select $1::int + $2 as a, $3::text as b'
  const run = (client: number, n: number) => {
    // `unsafe` prepares only when asked, whatever the pool's setting.
    if (way !== 'inline') return sql.unsafe(text, [client, n, 'x'], { prepare: way === 'named' })
    return queryInlinedRaw(sql, text, [client, n, 'x'])
  }
  try {
    await Promise.all(Array.from({ length: clients }, () => sql`select 1`))
    const latencies: number[] = []
    const cpu = process.cpuUsage()
    const end = performance.now() + seconds * 1000
    await Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        for (let n = 0; performance.now() < end; n++) {
          const started = performance.now()
          await run(client, n)
          latencies.push(performance.now() - started)
        }
      }),
    )
    const used = process.cpuUsage(cpu)
    latencies.sort((a, b) => a - b)
    const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]
    return { rate: latencies.length / seconds, p50: at(0.5), p95: at(0.95), cpuUs: (used.user + used.system) / latencies.length }
  } finally {
    await sql.end({ timeout: 1 })
  }
}

console.log(`select $1::int + $2, $3::text, ${clients} clients, ${seconds} s each`)
for (const [label, way] of [
  ['unnamed (prepare: false, ours)', 'unnamed'],
  ['values written in (catalogue)', 'inline'],
  ['named (prepare: true)', 'named'],
] as const) {
  const r = await measure(way)
  console.log(
    `${label.padEnd(32)} ${Math.round(r.rate).toLocaleString('en')} queries/s  p50 ${r.p50.toFixed(2)} ms  p95 ${r.p95.toFixed(2)} ms  ` +
      `${Math.round(r.cpuUs)} µs CPU a query (driver)`,
  )
}
