/**
 * `bun run bench events [--duration 10] [--pairs 2] [--relay] [--ingests 20000] [--events 1000000] [--rate 2500]`
 *
 * Events and webhooks (contract §10), every figure side by
 * side in one run, every store local, every server a child process on loopback:
 *  1. write latency at c=16: POST /leads and PATCH /properties, p50/p95, against an API process
 *     that records no events and one that does (the per-business sequence must not serialise a
 *     business's writes: every request here is the same business), with the CPU time per
 *     request of the API process and of PostgreSQL (/proc: where the events' cost lands); with
 *     `--relay`, a webhook-delivery worker process (the relay that numbers events) runs in every run;
 *  2. rental-ingest throughput (accepted and persisted leads/s, one lead-ingest worker process)
 *     without any webhook endpoint, then with one `lead.created` endpoint on loopback delivered by
 *     a webhook-delivery worker process at the same time;
 *  3. delivery: one webhook-delivery worker process and a fast receiver; a backlog drained
 *     (deliveries/s), then events recorded at `--rate` per second for `--duration`, with the
 *     event-to-delivery latency (event created_at → the receiver has the request) p50/p95/p99;
 *  4. GET /events?after= p50/p95 at c=16 with `--events` events of one business in the table.
 * Data goes to its own database (DATABASE_URL's name + `_bench`, or BENCH_DATABASE_URL) under
 * fresh businesses, removed at the end, and a fresh queue prefix.
 */
import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import { parseFlags } from './flags'
import { Http1Pool, prepareRequest } from './http1-client'
import { cpuSeconds, postgresCpuSeconds, vacuumWhenAutovacuumOff } from './load'
import { migrateDatabase } from '../db/migrate'
import { generateApiKey } from '../shared/access/api-key-format'
import { getConfig } from '../shared/platform/config'
import { createLogger } from '../shared/platform/logger'
import { redisConnection } from '../shared/platform/queues'

const f = parseFlags(process.argv.slice(2))
const num = (name: string, fallback: number) => (f.flags[name] === undefined ? fallback : Number(f.flags[name]))
const DURATION_S = num('duration', 10)
const INGESTS = num('ingests', 20_000)
const EVENT_ROWS = num('events', 1_000_000)
const RATE = num('rate', 2500)
/** Phase 1: how many (without, with) pairs of runs are averaged. */
const PAIRS = num('pairs', 2)
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR
const PHASES = new Set(String(f.flags.phases ?? '1,2,3,4').split(','))
/** Phase 1 with a webhook-delivery worker process running in every run: the relay numbering the events as they come. */
const WITH_RELAY = Boolean(f.flags.relay)

const pct = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN)
const ms = (x: number) => `${x.toFixed(1)} ms`
const line = (label: string, ...cols: string[]) => console.log(`  ${label.padEnd(44)}${cols.map((c) => c.padEnd(26)).join('')}`)

function benchUrl(): string {
  if (process.env.BENCH_DATABASE_URL) return process.env.BENCH_DATABASE_URL
  const u = new URL(getConfig().databaseUrl)
  u.pathname = `/${decodeURIComponent(u.pathname.slice(1))}_bench`
  return u.toString()
}

// ---- child processes ----

if (f.flags.api) {
  if (f.flags['no-events']) {
    // The "without events" API process records none: this process's event module is replaced
    // by one that writes no outbox rows (the service itself always records, contract §10.1). The
    // bench turns off the contacts trigger that appends lead.created in its own database.
    const { mock } = await import('bun:test')
    mock.module('../shared/events/record', () => ({ eventRows: () => [], recordEvents: async () => {}, recordEvent: async () => {} }))
  }
  const { createApp } = await import('../api/app')
  const { createApiDeps } = await import('../api/runtime')
  const deps = await createApiDeps(getConfig(), createLogger('error'))
  const app = createApp(deps)
  Bun.serve({ port: Number(f.flags.port), hostname: '127.0.0.1', fetch: (req) => app.handle(req) })
  // A clean exit, so that a profiled run writes its profile.
  process.on('SIGTERM', () => process.exit(0))
  console.log('ready')
  await new Promise(() => {})
}
if (f.flags.worker) {
  const { startWorkers } = await import('../worker/runtime')
  await startWorkers(getConfig(), createLogger('error'), String(f.flags.worker).split(',') as never)
  console.log('ready')
  await new Promise(() => {})
}
if (f.flags.receiver) {
  // Records, per request, the event's created_at and when it arrived; answers at once.
  let latencies: number[] = []
  let count = 0
  Bun.serve({
    port: Number(f.flags.port),
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url)
      if (url.pathname === '/stats') {
        const body = JSON.stringify({ count, latencies })
        if (url.searchParams.has('reset')) latencies = []
        return new Response(body)
      }
      const text = await req.text()
      count++
      const created = text.indexOf('"created_at":"')
      if (created !== -1) latencies.push(Date.now() - Date.parse(text.slice(created + 14, created + 38)))
      return new Response(null, { status: 204 })
    },
  })
  console.log('ready')
  await new Promise(() => {})
}

// ---- the run ----

const children: ReturnType<typeof Bun.spawn>[] = []
async function spawnChild(args: string[], env: Record<string, string>): Promise<ReturnType<typeof Bun.spawn>> {
  // BENCH_PROFILE_DIR: the API processes write a CPU profile (markdown) there when stopped.
  const profile = PROFILE_DIR && args[0] === '--api' ? ['--cpu-prof-md', `--cpu-prof-dir=${PROFILE_DIR}`] : []
  const child = Bun.spawn(['bun', ...profile, import.meta.path, ...args], {
    env: { ...process.env, ...env, LOG_LEVEL: 'error' },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  children.push(child)
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader()
  let text = ''
  while (!text.includes('ready')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`${args.join(' ')} exited before it was ready`)
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return child
}
async function stop(child: ReturnType<typeof Bun.spawn>) {
  child.kill(PROFILE_DIR ? 'SIGTERM' : 'SIGKILL')
  await child.exited
}
const freePort = () => {
  const s = Bun.serve({ port: 0, fetch: () => new Response() })
  const port = s.port!
  s.stop(true)
  return port
}

const databaseUrl = benchUrl()
await migrateDatabase(databaseUrl)
const sql = postgres(databaseUrl, { max: 8, onnotice: () => {} })
const prefix = `bench-events-${randomBytes(3).toString('hex')}`
const env = {
  DATABASE_URL: databaseUrl,
  QUEUE_PREFIX: prefix,
  WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
  NODE_ENV: process.env.NODE_ENV ?? 'development',
}
const businessIds: number[] = []

async function newBusiness(name: string): Promise<{ id: number; key: string }> {
  const [{ id }] = await sql<{ id: number }[]>`insert into businesses (name) values (${name}) returning id`
  businessIds.push(id)
  const k = generateApiKey()
  const scopes = ['properties:read', 'properties:write', 'leads:read', 'leads:write', 'leads:ingest', 'webhooks:write']
  await sql`insert into api_keys (business_id, key_id, secret_hash, name, scopes) values (${id}, ${k.keyId}, ${k.secretHash}, 'bench', ${sql.array(scopes)})`
  return { id, key: k.apiKey }
}

/** Closed-loop load at `concurrency` for `seconds`; latencies of 2xx answers. */
async function load(
  base: URL,
  concurrency: number,
  seconds: number,
  request: (i: number) => Buffer,
): Promise<{ latencies: number[]; errors: number; n: number }> {
  const pool = new Http1Pool(base)
  const latencies: number[] = []
  let errors = 0
  let i = 0
  const deadline = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const req = request(i++)
        const t = performance.now()
        const res = await pool.send(req).catch(() => ({ status: 0, body: '' }))
        if (res.status >= 200 && res.status < 300) latencies.push(performance.now() - t)
        else errors++
      }
    }),
  )
  pool.close()
  return { latencies: latencies.sort((a, b) => a - b), errors, n: i }
}

const setLeadCreatedTrigger = (on: boolean) => sql.unsafe(`alter table contacts ${on ? 'enable' : 'disable'} trigger contacts_lead_created`)

const headersOf = (key: string) => ({ 'x-api-key': key, 'content-type': 'application/json' })
const phone = (i: number, base: number) => `+346${String(base + i).padStart(8, '0')}`
const propertyBody = (title: string) =>
  JSON.stringify({ operations: ['venta'], type: 'apartamento', title, pricing: { sale: 250000 }, location: { city: 'Valencia' }, area: { total: 90 } })

try {
  // On, whatever an interrupted earlier run left: the runs without events turn it off for themselves.
  await setLeadCreatedTrigger(true)
  console.log(`bench events: database ${new URL(databaseUrl).pathname.slice(1)}, queue prefix ${prefix}, ${DURATION_S} s per phase`)

  // 1. write latency with and without events --------------------------------------------------
  if (PHASES.has('1')) {
    await vacuumWhenAutovacuumOff(sql)
    console.log(
      `\n1. write latency at c=16, one business (p50 / p95; goal: with events ≤ 1.2× ` +
        `without)${WITH_RELAY ? ', a webhook-delivery worker (the relay) running' : ''}`,
    )
    line('', 'without events', 'with events', 'ratio p95')
    type WriteRun = { p50: number; p95: number; rps: number; errors: number; apiMs: number; pgMs: number }
    const writes: Record<string, WriteRun[]> = { 'POST /leads': [], 'PATCH /properties/{id}': [] }
    // Alternating runs (without, with, without, with, …: `--pairs` pairs), each its own API process
    // and business, so a drift of the machine over the phase weighs on both; the figures are the
    // means over the pairs.
    const modes = Array.from({ length: PAIRS }, () => ['without', 'with'] as const).flat()
    for (const [round, mode] of modes.entries()) {
      const port = freePort()
      // Without events: the API records none, and the contacts trigger that appends lead.created
      // (migration 0026) is off in this benchmark's own database for the run.
      await setLeadCreatedTrigger(mode === 'with')
      const api = await spawnChild(['--api', '--port', String(port), ...(mode === 'without' ? ['--no-events'] : [])], env)
      const relay = WITH_RELAY ? await spawnChild(['--worker', 'webhook-delivery'], env) : undefined
      const base = new URL(`http://127.0.0.1:${port}`)
      const biz = await newBusiness(`bench-events-writes-${mode}-${round}`)
      const h = headersOf(biz.key)
      const ids: number[] = []
      for (let i = 0; i < 64; i++) {
        const r = await fetch(new URL('/v1/properties', base), { method: 'POST', headers: h, body: propertyBody(`p${i}`) })
        ids.push(((await r.json()) as { id: number }).id)
      }
      // Phones are unique per business, and each run has its own.
      const seed = 10_000_000
      // Warm-up, then the measured runs.
      await load(base, 16, 2, (i) =>
        prepareRequest('POST', new URL('/v1/leads', base), h, JSON.stringify({ name: `w ${i}`, phone: phone(i, seed + 5_000_000) })),
      )
      await load(base, 16, 1, (i) => prepareRequest('PATCH', new URL(`/v1/properties/${ids[i % ids.length]}`, base), h, JSON.stringify({ title: `w${i}` })))
      // CPU per request of the API process and of PostgreSQL (all its processes), from /proc.
      const measured = async (run: () => ReturnType<typeof load>) => {
        const [api0, pg0] = [cpuSeconds(api.pid), postgresCpuSeconds()]
        const result = await run()
        const n = Math.max(1, result.latencies.length)
        return { ...result, apiMs: ((cpuSeconds(api.pid) - api0) / n) * 1000, pgMs: ((postgresCpuSeconds() - pg0) / n) * 1000 }
      }
      const leads = await measured(() =>
        load(base, 16, DURATION_S, (i) => prepareRequest('POST', new URL('/v1/leads', base), h, JSON.stringify({ name: `Lead ${i}`, phone: phone(i, seed) }))),
      )
      const patches = await measured(() =>
        load(base, 16, DURATION_S, (i) =>
          prepareRequest('PATCH', new URL(`/v1/properties/${ids[i % ids.length]}`, base), h, JSON.stringify({ title: `t${i}` })),
        ),
      )
      writes['POST /leads'].push({
        p50: pct(leads.latencies, 50),
        p95: pct(leads.latencies, 95),
        rps: leads.latencies.length / DURATION_S,
        errors: leads.errors,
        apiMs: leads.apiMs,
        pgMs: leads.pgMs,
      })
      writes['PATCH /properties/{id}'].push({
        p50: pct(patches.latencies, 50),
        p95: pct(patches.latencies, 95),
        rps: patches.latencies.length / DURATION_S,
        errors: patches.errors,
        apiMs: patches.apiMs,
        pgMs: patches.pgMs,
      })
      if (relay) await stop(relay)
      await stop(api)
    }
    const mean = (xs: WriteRun[]): WriteRun => {
      const avg = (f: (x: WriteRun) => number) => xs.reduce((sum, x) => sum + f(x), 0) / xs.length
      return {
        p50: avg((x) => x.p50),
        p95: avg((x) => x.p95),
        rps: avg((x) => x.rps),
        errors: xs.reduce((sum, x) => sum + x.errors, 0),
        apiMs: avg((x) => x.apiMs),
        pgMs: avg((x) => x.pgMs),
      }
    }
    const means = Object.entries(writes).map(
      ([label, runs]) => [label, mean(runs.filter((_, i) => i % 2 === 0)), mean(runs.filter((_, i) => i % 2 === 1))] as const,
    )
    for (const [label, a, b] of means) {
      line(
        label,
        `${ms(a.p50)} / ${ms(a.p95)} (${a.rps.toFixed(0)}/s)`,
        `${ms(b.p50)} / ${ms(b.p95)} (${b.rps.toFixed(0)}/s)`,
        `${(b.p95 / a.p95).toFixed(2)}×${a.errors + b.errors ? ` (${a.errors + b.errors} errors)` : ''}`,
      )
    }
    for (const [label, runs] of Object.entries(writes)) {
      const ratios = runs.flatMap((run, i) => (i % 2 === 1 ? [(run.p95 / runs[i - 1].p95).toFixed(2)] : []))
      line(`  p95 ratio of each pair`, ratios.join(' '), '', label)
    }
    for (const [label, a, b] of means) {
      line(`  CPU per request: API + PostgreSQL`, `${a.apiMs.toFixed(3)} + ${a.pgMs.toFixed(3)} ms`, `${b.apiMs.toFixed(3)} + ${b.pgMs.toFixed(3)} ms`, label)
    }
  }

  // 2. ingest throughput without and with a lead.created endpoint ------------------------------
  const receiverPort = freePort()
  const receiver = await spawnChild(['--receiver', '--port', String(receiverPort)], env)
  if (PHASES.has('2')) {
    await vacuumWhenAutovacuumOff(sql)
    console.log(`\n2. rental ingest of ${INGESTS} leads at c=64 (goal: with a lead.created endpoint ≥ 0.8× without)`)
    line('', 'no endpoint', 'one lead.created endpoint', 'ratio')
    const ingest: { accepted: number; persisted: number; delivered: number }[] = []
    for (const mode of ['without', 'with'] as const) {
      const port = freePort()
      const api = await spawnChild(['--api', '--port', String(port)], env)
      const ingestWorker = await spawnChild(['--worker', 'lead-ingest'], env)
      const hookWorker = await spawnChild(['--worker', 'webhook-delivery'], env)
      const base = new URL(`http://127.0.0.1:${port}`)
      const biz = await newBusiness(`bench-events-ingest-${mode}`)
      if (mode === 'with') {
        const r = await fetch(new URL('/v1/webhook_endpoints', base), {
          method: 'POST',
          headers: headersOf(biz.key),
          body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/hook`, enabled_events: ['lead.created'] }),
        })
        if (r.status !== 201) throw new Error(`endpoint: ${r.status} ${await r.text()}`)
      }
      const before = ((await (await fetch(`http://127.0.0.1:${receiverPort}/stats?reset`)).json()) as { count: number }).count
      const pool = new Http1Pool(base)
      const t0 = performance.now()
      let next = 0
      const seed = mode === 'without' ? 30_000_000 : 40_000_000
      await Promise.all(
        Array.from({ length: 64 }, async () => {
          for (let i = next++; i < INGESTS; i = next++) {
            const body = JSON.stringify({
              id: `s${i}`,
              createdAt: '2026-11-01T10:00:00Z',
              source: 'landing',
              sourcePage: 'https://example.com/',
              contact: { name: `Ingest ${i}`, phone: phone(i, seed) },
              search: { budget: '800-1100', habs: '2' },
            })
            await pool.send(prepareRequest('POST', new URL('/v1/leads/ingest', base), headersOf(biz.key), body))
          }
        }),
      )
      const acceptedS = (performance.now() - t0) / 1000
      pool.close()
      for (;;) {
        const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from contacts where business_id = ${biz.id}`
        if (n >= INGESTS) break
        await Bun.sleep(20)
      }
      const persistedS = (performance.now() - t0) / 1000
      let delivered = 0
      if (mode === 'with') {
        for (;;) {
          delivered = ((await (await fetch(`http://127.0.0.1:${receiverPort}/stats`)).json()) as { count: number }).count - before
          if (delivered >= INGESTS || performance.now() - t0 > 120_000) break
          await Bun.sleep(50)
        }
      }
      ingest.push({ accepted: INGESTS / acceptedS, persisted: INGESTS / persistedS, delivered: delivered / ((performance.now() - t0) / 1000) })
      for (const c of [api, ingestWorker, hookWorker]) await stop(c)
    }
    line('accepted leads/s (API)', ingest[0].accepted.toFixed(0), ingest[1].accepted.toFixed(0), `${(ingest[1].accepted / ingest[0].accepted).toFixed(2)}×`)
    line(
      'persisted leads/s (send → all stored)',
      ingest[0].persisted.toFixed(0),
      ingest[1].persisted.toFixed(0),
      `${(ingest[1].persisted / ingest[0].persisted).toFixed(2)}×`,
    )
    line('delivered lead.created/s (send → all delivered)', '-', ingest[1].delivered.toFixed(0), '')
  }

  // 3. delivery rate and event-to-delivery latency --------------------------------------------
  if (PHASES.has('3')) {
    await vacuumWhenAutovacuumOff(sql)
    console.log(`\n3. webhook delivery, one webhook-delivery worker process, fast receiver on loopback (goals: ≥ 2,000/s; p95 ≤ 100 ms at that rate)`)
    {
      const port = freePort()
      const api = await spawnChild(['--api', '--port', String(port)], env)
      const base = new URL(`http://127.0.0.1:${port}`)
      const biz = await newBusiness('bench-events-delivery')
      const r = await fetch(new URL('/v1/webhook_endpoints', base), {
        method: 'POST',
        headers: headersOf(biz.key),
        body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/hook`, enabled_events: ['*'] }),
      })
      if (r.status !== 201) throw new Error(`endpoint: ${r.status} ${await r.text()}`)
      await stop(api)
      const { appendEvents } = await import('../db/queries/events')
      const { createDatabase } = await import('../db/client')
      const database = createDatabase(databaseUrl, { max: 4 })
      const eventRows = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ type: 'lead.created', data: { object: { id: i + 1, name: 'Bench', notes: '' } } }))
      // a. a backlog of 20,000 events, then the worker drains it.
      const BACKLOG = 20_000
      for (let i = 0; i < BACKLOG; i += 1000) await database.db.transaction((tx) => appendEvents(tx, biz.id, eventRows(1000)))
      const stats = async () => (await (await fetch(`http://127.0.0.1:${receiverPort}/stats?reset`)).json()) as { count: number; latencies: number[] }
      const start = (await stats()).count
      const worker = await spawnChild(['--worker', 'webhook-delivery'], env)
      const t0 = performance.now()
      let got = 0
      while (got < BACKLOG && performance.now() - t0 < 120_000) {
        await Bun.sleep(50)
        got = (await stats()).count - start
      }
      const drainRate = got / ((performance.now() - t0) / 1000)
      line('backlog drained (deliveries/s)', `${drainRate.toFixed(0)}/s`, `${got} of ${BACKLOG} in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
      // b. steady rate: events recorded at RATE/s in 10 ms ticks, latency measured at the receiver.
      await stats()
      const perTick = Math.max(1, Math.round(RATE / 100))
      const t1 = performance.now()
      let sent = 0
      const countBefore = (await stats()).count
      while (performance.now() - t1 < DURATION_S * 1000) {
        const due = Math.floor(((performance.now() - t1) / 10) * perTick)
        if (sent < due) {
          const n = Math.min(due - sent, perTick * 5)
          await database.db.transaction((tx) => appendEvents(tx, biz.id, eventRows(n)))
          sent += n
        } else await Bun.sleep(2)
      }
      const sentS = (performance.now() - t1) / 1000
      let s = await stats()
      const latencies = [...s.latencies]
      let delivered = s.count - countBefore
      const t2 = performance.now()
      while (delivered < sent && performance.now() - t2 < 30_000) {
        await Bun.sleep(50)
        s = await stats()
        latencies.push(...s.latencies)
        delivered = s.count - countBefore
      }
      latencies.sort((a, b) => a - b)
      line(`recorded at ${RATE}/s for ${DURATION_S} s`, `${(sent / sentS).toFixed(0)} events/s recorded`, `${delivered} of ${sent} delivered`)
      line(
        'event-to-delivery latency p50 / p95 / p99',
        `${ms(pct(latencies, 50))} / ${ms(pct(latencies, 95))} / ${ms(pct(latencies, 99))}`,
        `max ${ms(latencies[latencies.length - 1] ?? NaN)}`,
      )
      await stop(worker)
      await database.close(2)
    }
  }
  await stop(receiver)

  // 4. GET /events?after= with 1M events ----------------------------------------------------------
  if (PHASES.has('4')) {
    await vacuumWhenAutovacuumOff(sql)
    console.log(`\n4. GET /events?after=<random> at c=16 with ${EVENT_ROWS.toLocaleString('en')} events of one business in the table (goal: p95 ≤ 10 ms)`)
    {
      const biz = await newBusiness('bench-events-read')
      const t = performance.now()
      // Inserted as relayed events, straight into `events`.
      await sql`
      insert into events (id, business_id, type, sequence, data, created_at)
      select 'evt_bench' || ${biz.id} || '_' || g, ${biz.id}, case when g % 3 = 0 then 'property.updated' else 'lead.created' end, g,
             json_build_object('object', json_build_object('id', g, 'name', 'Lead ' || g, 'email', null, 'notes', '')), now()
      from generate_series(1, ${EVENT_ROWS}) g`
      await sql`insert into event_counters (business_id, last_sequence) values (${biz.id}, ${EVENT_ROWS})`
      await sql`analyze events`
      // Autovacuum's insert threshold would vacuum these rows (hint bits, visibility map) before long.
      await vacuumWhenAutovacuumOff(sql)
      const [{ total }] = await sql<{ total: number }[]>`select count(*)::int as total from events`
      line('inserted', `${EVENT_ROWS} events in ${((performance.now() - t) / 1000).toFixed(1)} s`, `${total.toLocaleString('en')} rows in the table`)
      const port = freePort()
      const api = await spawnChild(['--api', '--port', String(port)], env)
      const base = new URL(`http://127.0.0.1:${port}`)
      const h = { 'x-api-key': biz.key }
      const rand = () => Math.floor(Math.random() * (EVENT_ROWS - 200))
      await load(base, 16, 2, () => prepareRequest('GET', new URL(`/v1/events?after=${rand()}`, base), h, ''))
      // CPU per request of the API process and of PostgreSQL, as in phase 1: where a page's time goes.
      const cpuPerRequest = async (run: () => ReturnType<typeof load>) => {
        const [api0, pg0] = [cpuSeconds(api.pid), postgresCpuSeconds()]
        const result = await run()
        const n = Math.max(1, result.latencies.length)
        return {
          ...result,
          cpu: `CPU ${(((cpuSeconds(api.pid) - api0) / n) * 1000).toFixed(3)} + ${(((postgresCpuSeconds() - pg0) / n) * 1000).toFixed(3)} ms`,
        }
      }
      const page = await cpuPerRequest(() => load(base, 16, DURATION_S, () => prepareRequest('GET', new URL(`/v1/events?after=${rand()}`, base), h, '')))
      const filtered = await cpuPerRequest(() =>
        load(base, 16, DURATION_S, () => prepareRequest('GET', new URL(`/v1/events?after=${rand()}&types=property.*`, base), h, '')),
      )
      line(
        'GET /events?after=N (100 per page)',
        `p50 ${ms(pct(page.latencies, 50))}`,
        `p95 ${ms(pct(page.latencies, 95))}`,
        `${(page.latencies.length / DURATION_S).toFixed(0)} req/s${page.errors ? `, ${page.errors} errors` : ''}`,
        page.cpu,
      )
      line(
        'GET /events?after=N&types=property.*',
        `p50 ${ms(pct(filtered.latencies, 50))}`,
        `p95 ${ms(pct(filtered.latencies, 95))}`,
        `${(filtered.latencies.length / DURATION_S).toFixed(0)} req/s`,
        filtered.cpu,
      )
      await stop(api)
    }
  }
} finally {
  for (const c of children) c.kill('SIGKILL')
  await setLeadCreatedTrigger(true).catch(() => {})
  for (const id of businessIds) await sql`delete from businesses where id = ${id}`.catch(() => {})
  const redis = redisConnection(getConfig(), 'worker')
  const keys = await redis.keys(`${prefix}:*`)
  if (keys.length) await redis.del(...keys)
  redis.disconnect()
  await sql.end({ timeout: 2 })
}
process.exit(0)
