/**
 * `bun run bench catalogue --start [--listings 20000 --businesses 1] --cache-mb 0`: the catalogue
 * under the default topology. The supervisor of `bun run start` (main.ts, the database already
 * migrated by the bench) runs twice side by side: API_PROCESSES=1 and API_PROCESSES=<cores>, each
 * with WORKER_PROCESSES=1 and its default log level (its output to a file), as a user runs it.
 * Each shape runs against one and then the other, so both see the same moment of a shared machine.
 *
 * Per shape it prints the CPU per request of the API processes and of PostgreSQL (the backends of
 * the bench database, read from /proc) in each topology, the CPU per call of the same statements
 * through the driver alone in this process, req/s and p95 of each topology, their ratio, and whether
 * the goal holds: where the API's CPU per request exceeds PostgreSQL's, req/s with a process per
 * core ≥ 1.4× one process at an unchanged or better p95; no shape slower with more processes.
 */
import { readFileSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { resolve } from 'node:path'
import postgres from 'postgres'
import { createDatabase } from '../db/client'
import { queryCataloguePage } from '../db/queries/catalogue/list'
import { catalogueQueryOf, type ListParams } from '../shared/listings/catalogue-filters'
import { prepareRequest, type Http1Response } from './http1-client'
import { VARIED_MIX } from './catalogue-mix'
import { closedLoopCalls, closedLoopHttp, cpuSeconds, load1, percentile, ratePerSecond, seededRandom } from './load'

const ROOT = resolve(import.meta.dir, '..')
const GOAL_RATIO = 1.4

interface Topology {
  apiProcesses: number
  port: number
  apiPids: number[]
  workerPids: number[]
  stop: () => Promise<void>
}

/** `bun main.ts` with `apiProcesses` API processes and one worker on `port`, resolved once the supervisor logs `ready`. */
async function startTopology(url: string, port: number, apiProcesses: number, cacheMb: string | undefined): Promise<Topology> {
  const logPath = `${tmpdir()}/bench-catalogue-start-${port}.log`
  // Bun appends to a file it is given as stdout: a previous run's `ready` line (and pids) would be read first.
  rmSync(logPath, { force: true })
  // Nothing of the caller's own topology leaks in: the bench database only, one view per process.
  const { DATABASE_DIRECT_URL: _d, DATABASE_READ_URL: _r, METRICS_PORT: _m, API_PROCESSES: _a, WORKER_PROCESSES: _w, ...inherited } = process.env
  const supervisor = Bun.spawn(['bun', 'main.ts'], {
    cwd: ROOT,
    env: {
      ...inherited,
      DATABASE_URL: url,
      PORT: String(port),
      API_PROCESSES: String(apiProcesses),
      WORKER_PROCESSES: '1',
      // Its own queues, so the worker takes no job of another run or of the tests.
      QUEUE_PREFIX: 'bench-catalogue',
      ...(cacheMb === undefined ? {} : { CATALOGUE_CACHE_MB: cacheMb }),
    },
    stdout: Bun.file(logPath),
    stderr: 'inherit',
    stdin: 'ignore',
  })
  const stop = async () => {
    supervisor.kill('SIGTERM')
    await supervisor.exited
  }
  try {
    const deadline = performance.now() + 120_000
    for (;;) {
      if (supervisor.exitCode !== null) throw new Error(`main.ts exited ${supervisor.exitCode}; see ${logPath}`)
      if (performance.now() > deadline) throw new Error(`main.ts was not ready within 120 s; see ${logPath}`)
      const line = (await Bun.file(logPath).text()).split('\n').find((l) => l.includes('"msg":"ready","process":"supervisor"'))
      if (line) {
        const pids = (JSON.parse(line) as { pids: Record<string, number[]> }).pids
        // Start-up work (imports, JIT, first connections) settles before any figure is read.
        await Bun.sleep(2000)
        return { apiProcesses, port, apiPids: pids.api ?? [], workerPids: pids.worker ?? [], stop }
      }
      await Bun.sleep(100)
    }
  } catch (error) {
    await stop()
    throw error
  }
}

/** Busy and total jiffies of the whole machine (/proc/stat), for the share of both cores a run used. */
function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  const idle = fields[3] + fields[4]
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0)
  return { busy: total - idle, total }
}

interface CpuSnapshot {
  api: number
  worker: number
  pg: Map<number, number>
  client: number
  machine: { busy: number; total: number }
}

interface TopologyRun {
  rate: number
  p50: number
  p95: number
  p99: number
  failed: number
  firstError?: string
  /** CPU ms per request. */
  apiMs: number
  pgMs: number
  workerMs: number
  clientMs: number
  /** Cores the API processes kept busy; share of the machine busy. */
  apiCores: number
  machineBusy: number
  load: string
}

/** One shape's requests against one topology, with the CPU each side spent on them. */
async function runShape(
  topology: Topology,
  backends: () => Promise<number[]>,
  requestsOf: (target: URL) => { warm: (i: number) => Buffer; drawn: (i: number) => Buffer },
  concurrency: number,
  requests: number,
): Promise<TopologyRun> {
  const target = new URL(`http://127.0.0.1:${topology.port}/`)
  const okStatus = (res: Http1Response) => (res.status === 200 ? undefined : `${res.status} ${res.body.slice(0, 200)}`)
  const { warm, drawn } = requestsOf(target)
  await closedLoopHttp(target, concurrency, Math.min(200, requests), warm, okStatus)
  const sum = (pids: number[]) => pids.reduce((s, pid) => s + cpuSeconds(pid), 0)
  const snapshot = async (): Promise<CpuSnapshot> => {
    const pids = await backends()
    return {
      api: sum(topology.apiPids),
      worker: sum(topology.workerPids),
      pg: new Map(pids.map((pid) => [pid, cpuSeconds(pid)])),
      client: cpuSeconds(process.pid),
      machine: machineTicks(),
    }
  }
  const before = await snapshot()
  const http = await closedLoopHttp(target, concurrency, requests, drawn, okStatus)
  const after = await snapshot()
  const load = load1()
  // A backend opened during the run counts from zero; one closed during it is lost (the pools keep theirs).
  let pg = 0
  for (const [pid, cpu] of after.pg) pg += cpu - (before.pg.get(pid) ?? 0)
  const perRequest = (seconds: number) => (seconds / Math.max(1, http.ok)) * 1000
  return {
    rate: ratePerSecond(http),
    p50: percentile(http.latencies, 50),
    p95: percentile(http.latencies, 95),
    p99: percentile(http.latencies, 99),
    failed: http.failed,
    firstError: http.firstError,
    apiMs: perRequest(after.api - before.api),
    pgMs: perRequest(pg),
    workerMs: perRequest(after.worker - before.worker),
    clientMs: perRequest(after.client - before.client),
    apiCores: (after.api - before.api) / http.seconds,
    machineBusy: (after.machine.busy - before.machine.busy) / Math.max(1, after.machine.total - before.machine.total),
    load,
  }
}

/**
 * CPU per call of this process running the page's statement through the driver alone (the API's
 * pool options, raw rows) at `concurrency`: what the driver costs an API process per request.
 */
async function driverCpuMs(alone: ReturnType<typeof createDatabase>, businessId: number, warm: ListParams[], drawn: ListParams[], concurrency: number) {
  const call = (params: ListParams[]) => async (i: number) => {
    await queryCataloguePage(alone.sql, catalogueQueryOf(businessId, params[i]).query)
    return undefined
  }
  await closedLoopCalls(concurrency, Math.min(200, warm.length), call(warm))
  const before = cpuSeconds(process.pid)
  const run = await closedLoopCalls(concurrency, drawn.length, call(drawn))
  return ((cpuSeconds(process.pid) - before) / Math.max(1, run.ok)) * 1000
}

export interface StartShapeResult {
  name: string
  one: TopologyRun
  many: TopologyRun
  driverMs: number
  ratio: number
  applies: boolean
  met: boolean
}

/**
 * Every shape of VARIED_MIX against one API process and then against one per core, both under
 * main.ts with a worker. Prints one row per shape and the verdict; returns the rows.
 */
export async function startScalingTable(
  url: string,
  businessId: number,
  apiKey: string,
  opts: { requests: number; concurrency: number; port: number; seed: number; shapes?: string[]; cacheMb?: string },
): Promise<StartShapeResult[]> {
  const cores = availableParallelism()
  const { requests, concurrency } = opts
  const monitor = postgres(url, { max: 1, onnotice: () => {} })
  const backends = async () =>
    (await monitor<{ pid: number }[]>`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`).map((r) => r.pid)
  const alone = createDatabase(url, { max: concurrency })
  const one = await startTopology(url, opts.port, 1, opts.cacheMb)
  let many: Topology | undefined
  const results: StartShapeResult[] = []
  try {
    many = await startTopology(url, opts.port + 1, cores, opts.cacheMb)
    console.log(
      `\nbun run start's supervisor (main.ts) twice, each with 1 worker process: 1 API process (port ${one.port}) and ${cores} ` +
        `(port ${many.port}, one per core); ${concurrency} clients, ${requests} requests per shape and topology, each with its own ` +
        `parameters; page cache ${opts.cacheMb ?? 'default'} MB; ${cores} cores; load ${load1()}`,
    )
    console.log(
      'CPU per request in ms: the API processes, the PostgreSQL backends of the bench database, and the driver alone (this ' +
        'process running the same statements through the API pool options); the goal applies where API > PG with 1 process.\n',
    )
    console.log(
      `| shape | API CPU 1 proc | PG CPU 1 proc | driver alone | goal applies | 1 proc req/s | p95 ms | API cores | API CPU ${cores} procs | ` +
        `PG CPU ${cores} procs | ${cores} procs req/s | p95 ms | API cores | machine busy | ratio | verdict | load |`,
    )
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
    const shapes = VARIED_MIX.filter((s) => !opts.shapes || opts.shapes.some((prefix) => s.name.startsWith(prefix)))
    for (const { name, draw } of shapes) {
      const paramsOf = (seed: number) => {
        const r = seededRandom(seed)
        return Array.from({ length: requests }, () => draw(r))
      }
      const [warm, drawn] = [paramsOf(opts.seed + 1), paramsOf(opts.seed)]
      const toQuery = (p: ListParams) => new URLSearchParams(Object.entries(p).map(([k, v]) => [k, String(v)] as [string, string])).toString()
      const requestsOf = (target: URL) => {
        const of = (p: ListParams) => prepareRequest('GET', new URL(`/v1/properties?${toQuery(p)}`, target), { 'x-api-key': apiKey }, '')
        return { warm: (i: number) => of(warm[i]), drawn: (i: number) => of(drawn[i]) }
      }
      const a = await runShape(one, backends, requestsOf, concurrency, requests)
      const b = await runShape(many, backends, requestsOf, concurrency, requests)
      const driverMs = await driverCpuMs(alone, businessId, warm, drawn, concurrency)
      for (const [label, run] of [
        ['1 process', a],
        [`${cores} processes`, b],
      ] as const)
        if (run.failed) console.log(`  ! ${name}, ${label}: ${run.failed} failed, first: ${run.firstError}`)
      const ratio = b.rate / a.rate
      const applies = a.apiMs > a.pgMs
      const noErrors = a.failed === 0 && b.failed === 0
      const met = noErrors && ratio >= 1 && (!applies || (ratio >= GOAL_RATIO && b.p95 <= a.p95))
      // Where the 1.4× goal does not apply, only "no shape slower" is judged.
      const verdict = !noErrors
        ? 'NOT met (errors)'
        : applies
          ? met
            ? 'met'
            : `NOT met${b.p95 > a.p95 ? ' (p95)' : ''}`
          : met
            ? 'not slower'
            : 'NOT met (slower)'
      results.push({ name, one: a, many: b, driverMs, ratio, applies, met })
      const f = (x: number, d = 1) => x.toFixed(d)
      const oneCols = `${f(a.apiMs, 2)} | ${f(a.pgMs, 2)} | ${f(driverMs, 2)} | ${applies ? 'yes' : 'no'} | ${f(a.rate, 0)} | ${f(a.p95)} | ${f(a.apiCores, 2)}`
      const manyCols = `${f(b.apiMs, 2)} | ${f(b.pgMs, 2)} | ${f(b.rate, 0)} | ${f(b.p95)} | ${f(b.apiCores, 2)}`
      const busy = `${f(100 * a.machineBusy, 0)}% / ${f(100 * b.machineBusy, 0)}%`
      console.log(`| ${name} | ${oneCols} | ${manyCols} | ${busy} | ${f(ratio, 2)}× | ${verdict} | ${a.load} / ${b.load} |`)
    }
    const applying = results.filter((r) => r.applies)
    console.log(
      `\n${results.filter((r) => r.met).length} of ${results.length} shapes met their rule; the ${GOAL_RATIO}× goal applies to ${applying.length} ` +
        `(${applying.map((r) => r.name).join(', ') || 'none'}); client CPU per request ${results.map((r) => r.one.clientMs.toFixed(2)).join(', ')} ms ` +
        `(1 proc); worker CPU per request ≤ ${Math.max(0, ...results.map((r) => Math.max(r.one.workerMs, r.many.workerMs))).toFixed(3)} ms; load ${load1()}`,
    )
    return results
  } finally {
    await many?.stop()
    await one.stop()
    await alone.close(2)
    await monitor.end({ timeout: 2 })
  }
}
