/**
 * Scenario s: `bun run start`'s supervisor (main.ts, its default topology: an API process per core
 * and one worker process) under mixed load — catalogue reads, property creates and publishes,
 * rental ingests, a webhook subscriber — while a random child is SIGKILLed every interval. It
 * uses the harness's PostgreSQL and Redis under its own queue prefix and port.
 *
 * SOAK_MINUTES=10 runs it as specified by hand (a kill every 30 s; the RSS of each child compared
 * from minute 2, or from two minutes into the life of a child that replaced a killed one, to its end
 * or its kill, over at least two minutes); without it, the short run of CI (45 s, a kill every 10 s,
 * RSS printed only).
 */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { Queues, redisConnection } from '../../shared/platform/queues'
import { freePort, ROOT } from '../helpers/processes'
import { until } from './cluster'
import { driveFor, pace, percentile, request, summariseStatuses, type Outcome, type ScenarioResult, type Target } from './load'
import { propertyBody, type HarnessContext } from './scenarios'

const PORT_ANSWER_BOUND_MS = 2000
const RSS_DRIFT_BOUND = 0.05
/** The shortest span a child's RSS is judged over. */
const RSS_MIN_SPAN_MS = 120_000
const is2xx = (o: Outcome) => o.status >= 200 && o.status < 300
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`

/** Resident memory of a process in MB (Linux /proc), undefined when it is gone. */
function rssMb(pid: number): number | undefined {
  try {
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return kb ? Number(kb[1]) / 1024 : undefined
  } catch {
    return undefined
  }
}

interface Child {
  group: string
  index: number
  pid: number
  startedAt: number
  /** RSS samples: [seconds since the scenario started, MB]. */
  rss: [number, number][]
}

export async function scenarioSoak(h: HarnessContext): Promise<ScenarioResult> {
  const minutes = Number(process.env.SOAK_MINUTES ?? 0)
  const long = minutes > 0
  const durationMs = long ? minutes * 60_000 : 45_000
  const killEveryMs = long ? 30_000 : 10_000
  /** RSS is compared from here to the end (minute 2 of a long run). */
  const rssFromMs = long ? Math.min(120_000, durationMs / 2) : 15_000
  const name = `s. soak: bun run start (supervisor, default topology) under mixed load for ${s(durationMs)}; a random child SIGKILLed every ${s(killEveryMs)}`
  const failures: string[] = []
  const notes: string[] = []
  const port = await freePort()
  const prefix = 'soak'
  const base = `http://127.0.0.1:${port}`
  // Two names for the one port: the client sends a request whose connection was reset once more,
  // as a load balancer does (ingest de-duplicates on the phone, creates carry an Idempotency-Key).
  const targets: Target[] = [
    { name: 'port', baseUrl: base },
    { name: 'port (again)', baseUrl: base },
  ]
  const biz = await h.newBusiness('s')

  // The webhook subscriber: every lead.created and property.published of the business.
  const deliveries: string[] = []
  const rx = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      deliveries.push(req.headers.get('webhook-id') ?? '')
      await req.text()
      return new Response(null, { status: 204 })
    },
  })

  const logFile = join(h.cluster.logDir, `soak-supervisor.log`)
  const fd = openSync(logFile, 'a')
  const { API_PROCESSES: _a, WORKER_PROCESSES: _w, ...inherited } = process.env
  const supervisor = Bun.spawn(['bun', 'run', 'main.ts'], {
    cwd: ROOT,
    env: { ...inherited, ...h.cluster.env, QUEUE_PREFIX: prefix, PORT: String(port), PUBLIC_URL: base },
    stdout: fd,
    stderr: fd,
    stdin: 'ignore',
  })
  closeSync(fd)
  // The supervisor's own lines, read as the log grows (it holds every request's line too).
  const reader = openSync(logFile, 'r')
  const chunk = Buffer.alloc(1 << 20)
  let position = 0
  let rest = ''
  const supervisorLines: Record<string, any>[] = []
  const logLines = () => {
    for (;;) {
      const n = readSync(reader, chunk, 0, chunk.length, position)
      if (n <= 0) break
      position += n
      rest += chunk.toString('latin1', 0, n)
    }
    const parts = rest.split('\n')
    rest = parts.pop() ?? ''
    for (const line of parts) if (line.startsWith('{') && line.includes('"process":"supervisor"')) supervisorLines.push(JSON.parse(line))
    return supervisorLines
  }
  const producer = redisConnection(h.cluster.redis.url, 'producer')
  producer.on('error', () => {})
  const queues = new Queues(producer, prefix)
  const t0 = performance.now()
  const children = new Map<number, Child>()
  /** The supervisor's children as its log names them; those alive now. */
  const refreshChildren = () => {
    for (const l of logLines()) {
      if (l.msg === 'process started' && l.process === 'supervisor' && !children.has(l.pid))
        children.set(l.pid, { group: l.group, index: l.index, pid: l.pid, startedAt: performance.now() - t0, rss: [] })
    }
    return [...children.values()].filter((c) => rssMb(c.pid) !== undefined)
  }
  try {
    await until(
      'the supervisor to be ready',
      async () => {
        if (supervisor.exitCode !== null) throw new Error(`main.ts exited ${supervisor.exitCode}: ${readFileSync(logFile, 'utf8').slice(-500)}`)
        return logLines().some((l) => l.msg === 'ready' && l.process === 'supervisor')
      },
      60_000,
      100,
    )
    const initial = refreshChildren()
    notes.push(`started: ${initial.map((c) => `${c.group} ${c.index} pid ${c.pid}`).join(', ')}`)
    const endpoint = await request(targets, 0, 'POST', '/v1/webhook_endpoints', {
      key: biz.apiKey,
      body: { url: `http://127.0.0.1:${rx.port}/soak`, enabled_events: ['lead.created', 'property.published'] },
    })
    if (endpoint.status !== 201) throw new Error(`creating the webhook endpoint answered ${endpoint.status}: ${JSON.stringify(endpoint.body)}`)

    let stop = false
    const ingestPhones: string[] = []
    const created: { key: string; id?: number; outcome: Outcome }[] = []
    const published: number[] = []
    const loads = Promise.all([
      // Rental ingests: every phone new, so each accepted one is exactly one contact.
      driveFor(
        () => stop,
        150,
        32,
        (i) => {
          const phone = `+34${611_000_000 + i}`
          ingestPhones[i] = phone
          return request(targets, i, 'POST', '/v1/leads/ingest', {
            key: biz.apiKey,
            body: {
              id: `s-${i}`,
              createdAt: new Date().toISOString(),
              source: 'faults-s',
              sourcePage: 'https://inmobiliaria.example/alquiler',
              contact: { name: `Soak ${i}`, phone },
              search: { budget: '900-1200', habs: '2' },
            },
          })
        },
      ),
      // Creates with an Idempotency-Key, each published once created.
      driveFor(
        () => stop,
        10,
        4,
        async (i) => {
          const key = `soak-${i}`
          const outcome = await request(targets, i, 'POST', '/v1/properties', {
            key: biz.apiKey,
            body: propertyBody(`Soak ${i}`),
            headers: { 'idempotency-key': key },
          })
          created[i] = { key, id: is2xx(outcome) ? outcome.body.id : undefined, outcome }
          if (!is2xx(outcome)) return outcome
          const pub = await request(targets, i, 'POST', `/v1/properties/${outcome.body.id}/publish`, { key: biz.apiKey })
          if (is2xx(pub)) published.push(outcome.body.id)
          return pub
        },
      ),
      // Catalogue reads.
      driveFor(
        () => stop,
        40,
        8,
        (i) =>
          request(
            targets,
            i,
            'GET',
            `/v1/properties?${['limit=20', 'operation=venta&min_price=200000', 'sort=price_asc', 'city=Valencia&min_bedrooms=2'][i % 4]}`,
            { key: biz.apiKey },
          ),
      ),
    ])

    // Kills: a random child every interval; the port must answer within the bound after each.
    const kills: { group: string; pid: number; answeredMs: number; replacedMs?: number }[] = []
    const sampleRss = () => {
      const at = (performance.now() - t0) / 1000
      for (const c of refreshChildren()) {
        const mb = rssMb(c.pid)
        if (mb !== undefined) c.rss.push([at, mb])
      }
    }
    const sampler = setInterval(sampleRss, 5000)
    const startedAt = performance.now()
    let nextKill = startedAt + killEveryMs
    while (performance.now() - startedAt < durationMs) {
      await pace(Math.max(0, Math.min(nextKill, startedAt + durationMs) - performance.now()))
      if (performance.now() - startedAt >= durationMs) break
      nextKill += killEveryMs
      const alive = refreshChildren()
      const victim = alive[Math.floor(Math.random() * alive.length)]
      if (!victim) {
        failures.push('no child alive to kill')
        continue
      }
      const before = children.size
      process.kill(victim.pid, 'SIGKILL')
      const killedAt = performance.now()
      await until(`pid ${victim.pid} to die`, async () => rssMb(victim.pid) === undefined, 5000, 5)
      const answered = await until(
        'the port to answer after a kill',
        async () =>
          (await fetch(`${base}/healthz`, { headers: { connection: 'close' }, signal: AbortSignal.timeout(1000) }).then(
            (r) => r.status === 200,
            () => false,
          )) && performance.now(),
        30_000,
        10,
      )
      const kill = { group: victim.group, pid: victim.pid, answeredMs: answered - killedAt, replacedMs: undefined as number | undefined }
      kills.push(kill)
      if (kill.answeredMs > PORT_ANSWER_BOUND_MS)
        failures.push(`the port answered ${s(kill.answeredMs)} after ${victim.group} pid ${victim.pid} was killed (bound ${s(PORT_ANSWER_BOUND_MS)})`)
      void until(
        'the replacement',
        async () => {
          refreshChildren()
          return children.size > before
        },
        60_000,
        50,
      ).then(
        () => (kill.replacedMs = performance.now() - killedAt),
        () => failures.push(`${victim.group} pid ${victim.pid} was not replaced within 60 s`),
      )
      h.progress(`soak: killed ${victim.group} ${victim.index} (pid ${victim.pid}); the port answered after ${s(kill.answeredMs)}`)
    }
    stop = true
    const [ingests, creates, reads] = await loads
    clearInterval(sampler)
    sampleRss()

    // Every accepted write in PostgreSQL: the worker stores what the queue still holds.
    await until(
      'the soak lead-ingest queue to drain',
      async () => {
        const c = await queues.get('lead-ingest').getJobCounts('waiting', 'active', 'delayed', 'prioritized')
        return c.waiting + c.active + c.delayed + c.prioritized === 0
      },
      120_000,
      200,
    )
    const acceptedPhones = new Set(ingests.map((o, i) => (o && is2xx(o) ? ingestPhones[i] : undefined)).filter((p): p is string => p !== undefined))
    const contacts = await h.sql<{ phone: string; n: number }[]>`select phone, count(*)::int as n from contacts where business_id = ${biz.id} group by phone`
    const stored = new Map(contacts.map((r) => [r.phone, r.n]))
    const lostLeads = [...acceptedPhones].filter((p) => !stored.has(p))
    const doubledLeads = contacts.reduce((n, r) => n + r.n - 1, 0)
    const acceptedCreates = created.filter((c) => c && c.id !== undefined)
    const properties = await h.sql<
      { id: number; title: string; published: boolean }[]
    >`select id, title, published_at is not null as published from properties where business_id = ${biz.id}`
    const byId = new Map(properties.map((p) => [p.id, p]))
    const lostCreates = acceptedCreates.filter((c) => !byId.has(c.id!))
    const titles = new Map<string, number>()
    for (const p of properties) titles.set(p.title, (titles.get(p.title) ?? 0) + 1)
    const doubledCreates = [...titles.values()].reduce((n, k) => n + k - 1, 0)
    const lostPublishes = published.filter((id) => !byId.get(id)?.published)
    if (lostLeads.length) failures.push(`${lostLeads.length} accepted ingests not stored, e.g. ${lostLeads.slice(0, 3).join(', ')}`)
    if (doubledLeads) failures.push(`${doubledLeads} ingested leads stored twice`)
    if (lostCreates.length) failures.push(`${lostCreates.length} answered creates not stored`)
    if (doubledCreates) failures.push(`${doubledCreates} properties created twice`)
    if (lostPublishes.length) failures.push(`${lostPublishes.length} answered publishes not published`)
    const all = [...ingests, ...creates, ...reads].filter(Boolean)
    const unanswered = all.filter((o) => !is2xx(o))
    const serverErrors = all.filter((o) => o.status >= 500)
    if (serverErrors.length) failures.push(`${serverErrors.length} answers 5xx, first: ${JSON.stringify(serverErrors[0].body).slice(0, 300)}`)
    if (kills.length === 0) failures.push('no child was killed')

    // RSS of each child from minute 2 of the load, or from two minutes into its own life for a child
    // that replaced a killed one (its caches start empty and fill, which is not drift), to its last
    // sample (the end, or its kill): judged when that span is at least RSS_MIN_SPAN_MS.
    const drifts: string[] = []
    const windowStartMs = rssFromMs + (startedAt - t0)
    const killed = new Set(kills.map((k) => k.pid))
    let judgedAny = false
    for (const c of children.values()) {
      const fromMs = Math.max(windowStartMs, c.startedAt + rssFromMs)
      const window = c.rss.filter(([at]) => at * 1000 >= fromMs)
      if (window.length < 2) continue
      const [[firstAt, first], [lastAt, last]] = [window[0], window[window.length - 1]]
      const drift = (last - first) / first
      const judged = (lastAt - firstAt) * 1000 >= RSS_MIN_SPAN_MS
      judgedAny ||= judged
      const role = `${killed.has(c.pid) ? 'killed' : 'alive at the end'}${judged ? '' : ', too short to judge'}`
      drifts.push(
        `${c.group} ${c.index} pid ${c.pid} (${role}) ${first.toFixed(0)} → ${last.toFixed(0)} MB ` +
          `from ${firstAt.toFixed(0)} s to ${lastAt.toFixed(0)} s (${(drift * 100).toFixed(1)}%)`,
      )
      if (long && judged && Math.abs(drift) > RSS_DRIFT_BOUND)
        failures.push(
          `RSS of ${c.group} pid ${c.pid} moved ${(drift * 100).toFixed(1)}% ` +
            `from ${firstAt.toFixed(0)} s to ${lastAt.toFixed(0)} s (bound ±${RSS_DRIFT_BOUND * 100}%)`,
        )
    }
    if (long && !judgedAny) notes.push('RSS drift not judged: no child lived two minutes into the compared window')
    const supervisorRss = rssMb(supervisor.pid)
    notes.push(
      `RSS from ${s(rssFromMs)} into the load (or into a replacement's life) to each child's end or kill: ` +
        `${drifts.join('; ') || 'no child lived through the window'}` +
        `${long ? '' : ' (printed only: the short run is too short to judge drift)'}; the supervisor ${supervisorRss?.toFixed(0)} MB`,
    )
    const killLine = (k: (typeof kills)[number]) =>
      `${k.group} pid ${k.pid} (port answered ${s(k.answeredMs)}, replaced ${k.replacedMs === undefined ? '?' : s(k.replacedMs)})`
    notes.push(`kills: ${kills.map(killLine).join('; ')}`)
    notes.push(`statuses: ${summariseStatuses(all)}; ${all.filter((o) => o.retried).length} sent once more after a reset connection`)
    const ms = all.filter((o) => !o.error).map((o) => o.ms)
    return {
      name,
      figures: {
        sent: all.length,
        accepted: all.length - unanswered.length,
        persisted: acceptedPhones.size - lostLeads.length + acceptedCreates.length - lostCreates.length,
        duplicates: doubledLeads + doubledCreates,
        lost: lostLeads.length + lostCreates.length + lostPublishes.length,
        ingests: `${acceptedPhones.size} accepted of ${ingests.length}`,
        creates: `${acceptedCreates.length} answered, ${published.length} published`,
        'catalogue reads': `${reads.filter(is2xx).length} of ${reads.length}`,
        'webhook deliveries': deliveries.length,
        kills: kills.length,
      },
      timings: {
        'port answered after a kill': `max ${s(Math.max(0, ...kills.map((k) => k.answeredMs)))} (bound ${s(PORT_ANSWER_BOUND_MS)})`,
        'child replaced after': `max ${s(Math.max(0, ...kills.map((k) => k.replacedMs ?? 0)))}`,
        latency: `p50 ${percentile(ms, 50).toFixed(0)} ms, p99 ${percentile(ms, 99).toFixed(0)} ms, max ${Math.max(0, ...ms).toFixed(0)} ms`,
      },
      // A request cut twice by kills (no answer) is reported, not failed: it was never accepted.
      notes,
      failures,
    }
  } finally {
    supervisor.kill('SIGTERM')
    const code = await Promise.race([supervisor.exited, pace(30_000).then(() => null)])
    if (code === null) supervisor.kill('SIGKILL')
    rx.stop(true)
    closeSync(reader)
    await queues.close().catch(() => {})
    producer.disconnect()
  }
}
