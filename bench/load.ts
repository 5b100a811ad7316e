/**
 * What the concurrency benches share: a closed-loop load generator on raw keep-alive HTTP/1.1
 * connections (bench/http1-client.ts), the same loop for any async call (the SQL alone), the
 * figures of a run, a child's resident memory and the machine's load average, printed beside
 * every figure because the machine is shared.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { Http1Pool, type Http1Response } from './http1-client'
import { autovacuumIsOn, vacuumChurnedTables } from '../db/queries/vacuum'
import type { Sql } from '../db/client'

export interface LoadRun {
  ok: number
  failed: number
  seconds: number
  /** Sorted, ms. */
  latencies: Float64Array
  firstError?: string
}

export const percentile = (sorted: Float64Array | number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN

export const ratePerSecond = (run: LoadRun) => run.ok / run.seconds

/** `concurrency` loops sharing `total` calls; call i gets its own index (so its own parameters). */
export async function closedLoopCalls(concurrency: number, total: number, call: (i: number) => Promise<string | undefined>): Promise<LoadRun> {
  const latencies: number[] = []
  let ok = 0
  let failed = 0
  let firstError: string | undefined
  let next = 0
  const start = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t = performance.now()
        let error: string | undefined
        try {
          error = await call(i)
        } catch (e) {
          error = String(e)
        }
        latencies.push(performance.now() - t)
        if (error === undefined) ok++
        else {
          failed++
          firstError ??= error
        }
      }
    }),
  )
  return { ok, failed, seconds: (performance.now() - start) / 1000, latencies: Float64Array.from(latencies).sort(), firstError }
}

/**
 * `connections` keep-alive connections, each sending its next request when the previous one
 * answered; `check` returns an error text for a response that does not count as served.
 */
export async function closedLoopHttp(
  url: URL,
  connections: number,
  total: number,
  request: (i: number) => Buffer,
  check: (res: Http1Response) => string | undefined,
): Promise<LoadRun> {
  const pools = Array.from({ length: connections }, () => new Http1Pool(url))
  let slot = 0
  const free: Http1Pool[] = [...pools]
  try {
    return await closedLoopCalls(connections, total, async (i) => {
      // One connection per loop: a loop takes a pool and gives it back.
      const pool = free.pop() ?? pools[slot++ % pools.length]
      try {
        return check(await pool.send(request(i)))
      } finally {
        free.push(pool)
      }
    })
  } finally {
    for (const pool of pools) pool.close()
  }
}

/** Resident memory of a process in MB (Linux /proc), NaN when it cannot be read. */
export async function rssMb(pid: number): Promise<number> {
  try {
    const status = await Bun.file(`/proc/${pid}/status`).text()
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)
    return kb ? Number(kb[1]) / 1024 : NaN
  } catch {
    return NaN
  }
}

/** A process and all its descendants, by pid (Linux /proc): what a user's one command runs. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)])
    } catch {}
  }
  const out: number[] = []
  const walk = (pid: number) => {
    out.push(pid)
    for (const child of children.get(pid) ?? []) walk(child)
  }
  walk(root)
  return out
}

/** Resident memory of a process and its descendants in MB. */
export async function treeRssMb(root: number): Promise<number> {
  const sizes = await Promise.all(processTree(root).map(rssMb))
  return sizes.filter((x) => !Number.isNaN(x)).reduce((a, b) => a + b, 0)
}

/**
 * CPU seconds (user + system) a process has used (Linux /proc; clock ticks at 100 Hz), 0 when it
 * cannot be read; with `reaped`, also that of its children that ended and were waited for.
 */
export function cpuSeconds(pid: number | string, reaped = false): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12]) + (reaped ? Number(fields[13]) + Number(fields[14]) : 0)) / 100
  } catch {
    return 0
  }
}

/**
 * CPU seconds used so far by every process named `postgres` on this machine: the server, its
 * backends, and (through the postmaster's reaped children) the backends that ended.
 */
export function postgresCpuSeconds(): number {
  let total = 0
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') total += cpuSeconds(pid, true)
    } catch {
      // gone meanwhile
    }
  }
  return total
}

/** The machine's CPU time so far (Linux /proc/stat, all cores, clock ticks): all of it, and what the hypervisor took (steal). */
export function machineTicks(): { total: number; steal: number } {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number)
    return { total: fields.reduce((a, b) => a + b, 0), steal: fields[7] ?? 0 }
  } catch {
    return { total: 0, steal: 0 }
  }
}

/**
 * The share of the machine's CPU time the hypervisor gave to other guests since `before`, as a
 * percentage: on a shared VM the same run's figures move with it (this one's bare rate went from
 * 106k to 14k req/s within an hour), so benches print it beside their figures.
 */
export function stealPercent(before: { total: number; steal: number }): string {
  const now = machineTicks()
  const total = now.total - before.total
  return total > 0 ? `${((100 * (now.steal - before.steal)) / total).toFixed(0)}%` : '?'
}

/** The 1-minute load average, as printed beside each figure. */
export const load1 = () => loadavg()[0].toFixed(2)

/** A deterministic pseudo-random sequence, so two runs draw the same parameters (the fault harness's). */
export { prng as seededRandom } from '../test/faults/load'

/**
 * When the server's autovacuum is off (some CI images turn it off), the tables a bench churns keep
 * every dead row: the relay's scan of events_unrelayed_idx took 131 ms over 9M dead entries, and
 * event-to-delivery latency went from 19 ms to 200 ms p50. Vacuums them as the worker's
 * maintenance does on such a server (db/queries/vacuum.ts), and says so once; nothing when
 * autovacuum is on.
 */
let autovacuumNoted = false
export async function vacuumWhenAutovacuumOff(sql: Sql): Promise<void> {
  if (await autovacuumIsOn(sql)) return
  const tables = await vacuumChurnedTables(sql)
  if (!autovacuumNoted)
    console.log(`(PostgreSQL's autovacuum is off: the bench vacuums ${tables.join(', ')} before each phase, as the worker's maintenance would)`)
  autovacuumNoted = true
}
