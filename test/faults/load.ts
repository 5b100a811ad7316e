/**
 * Load for the fault harness: HTTP calls with a hard timeout (a hang is a failure, not a wait),
 * a client that, like a load balancer, sends a request whose connection was refused or reset to
 * the other API (safe here: ingest de-duplicates on the phone, creates carry an
 * Idempotency-Key), bounded concurrency, and the figures of a scenario.
 */

export interface Outcome {
  status: number
  ms: number
  /** Connection-level error after the retry, or a timeout. */
  error?: string
  contentType?: string
  body?: any
  /** Sent again to another API after a connection error. */
  retried: boolean
  /** `Idempotent-Replayed: true` on the answer. */
  replayed?: boolean
}

export interface Target {
  name: string
  baseUrl: string
}

const TIMEOUT_MS = 15_000

async function once(url: string, init: RequestInit): Promise<Omit<Outcome, 'retried' | 'ms'>> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) })
  const text = await res.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: res.status, contentType: res.headers.get('content-type') ?? undefined, body, replayed: res.headers.get('idempotent-replayed') === 'true' }
}

const isConnectionError = (e: unknown) => {
  const code = (e as { code?: string })?.code ?? ''
  const msg = String((e as Error)?.message ?? e)
  return /ECONNREFUSED|ECONNRESET|ConnectionRefused|ConnectionClosed|socket connection was closed|EPIPE/i.test(code + ' ' + msg)
}

/** One request to `targets[i % n]`; on a connection error, once more to the next target. */
export async function request(
  targets: Target[],
  i: number,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Outcome> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.key) headers['x-api-key'] = options.key
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const init: RequestInit = { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) }
  const started = performance.now()
  let retried = false
  for (let attempt = 0; attempt < 2; attempt++) {
    const target = targets[(i + attempt) % targets.length]
    try {
      const r = await once(target.baseUrl + path, init)
      return { ...r, ms: performance.now() - started, retried }
    } catch (error) {
      if (attempt === 0 && targets.length > 1 && isConnectionError(error)) {
        retried = true
        continue
      }
      const timeout = (error as Error)?.name === 'TimeoutError'
      return {
        status: 0,
        ms: performance.now() - started,
        error: timeout ? `no answer within ${TIMEOUT_MS} ms` : String((error as Error)?.message ?? error),
        retried,
      }
    }
  }
  throw new Error('unreachable')
}

/** Runs `count` calls with at most `concurrency` in flight; `onProgress(sent)` after each start. */
export async function drive(
  count: number,
  concurrency: number,
  call: (i: number) => Promise<Outcome>,
  onProgress?: (started: number) => Promise<void> | void,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = new Array(count)
  let next = 0
  const lane = async () => {
    for (;;) {
      const i = next++
      if (i >= count) return
      if (onProgress) await onProgress(i)
      outcomes[i] = await call(i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane))
  return outcomes
}

/**
 * A fault scenario's own clock, on purpose: load sent at a pace, a fault held for a while, a
 * receiver that is slow to answer. Never a wait for a condition: that is `until` (cluster.ts).
 */
export const pace = (ms: number): Promise<void> => Bun.sleep(ms)

/** Sends paced calls until `stop()` says so; for scenarios that last a fixed time. */
export async function driveFor(untilStop: () => boolean, perSecond: number, concurrency: number, call: (i: number) => Promise<Outcome>): Promise<Outcome[]> {
  const outcomes: Outcome[] = []
  const start = performance.now()
  let i = 0
  const inflight = new Set<Promise<void>>()
  while (!untilStop()) {
    const due = Math.floor(((performance.now() - start) / 1000) * perSecond)
    while (i < due && inflight.size < concurrency && !untilStop()) {
      const n = i++
      const p = call(n)
        .then((o) => {
          outcomes[n] = o
        })
        .finally(() => inflight.delete(p))
      inflight.add(p)
    }
    await pace(5)
  }
  await Promise.all(inflight)
  return outcomes.filter(Boolean)
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

/** A small deterministic PRNG (mulberry32), so a run's phones and repeats can be replayed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export function ingestBody(phone: string, i: number, tag: string): Record<string, unknown> {
  return {
    id: `${tag}-${i}`,
    createdAt: new Date().toISOString(),
    source: `faults-${tag}`,
    sourcePage: 'https://inmobiliaria.example/alquiler/valencia',
    contact: { name: `Lead ${tag} ${i}`, phone },
    search: {
      budget: '900-1200',
      entryDate: '2026-12-01',
      people: '2',
      area: 'Ruzafa',
      habs: '2',
      pets: 'no',
      workSituation: 'empleado',
      freeText: 'Cerca del metro',
    },
  }
}

export interface Figures {
  sent: number
  accepted: number
  persisted: number
  duplicates: number
  lost: number
  [extra: string]: number | string
}

export interface ScenarioResult {
  name: string
  figures: Figures
  timings: Record<string, string>
  notes: string[]
  failures: string[]
}

export function summariseStatuses(outcomes: Outcome[]): string {
  const counts = new Map<string, number>()
  for (const o of outcomes) {
    const key = o.error ? `error(${o.error.slice(0, 40)})` : String(o.status)
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k}×${n}`)
    .join(' ')
}

export function printResult(r: ScenarioResult, write: (line: string) => void): void {
  write('')
  write(`== ${r.name}`)
  const entries = Object.entries(r.figures)
  const width = Math.max(...entries.map(([k]) => k.length), ...Object.keys(r.timings).map((k) => k.length))
  for (const [k, v] of entries) write(`  ${k.padEnd(width)}  ${v}`)
  for (const [k, v] of Object.entries(r.timings)) write(`  ${k.padEnd(width)}  ${v}`)
  for (const n of r.notes) write(`  · ${n}`)
  for (const f of r.failures) write(`  ✗ ${f}`)
  write(r.failures.length ? `FAIL ${r.name}` : `PASS ${r.name}`)
}
