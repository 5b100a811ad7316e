/**
 * The fault scenarios a to e, each returning its figures (sent, accepted, persisted,
 * duplicates, lost), timings and the reasons it failed. "accepted" is a 2xx answer; "persisted"
 * is what the database holds afterwards; "lost" is accepted but not persisted; "duplicates" is
 * rows beyond one per business key.
 */
import type postgres from 'postgres'
import type { Queues } from '../../shared/platform/queues'
import { until, type Cluster, type ManagedProcess } from './cluster'
import { drive, driveFor, ingestBody, percentile, prng, request, summariseStatuses, type Outcome, type ScenarioResult, type Target } from './load'

export interface HarnessContext {
  cluster: Cluster
  sql: postgres.Sql
  queues: Queues
  targets: Target[]
  ingests: number
  newBusiness(tag: string): Promise<{ id: number; apiKey: string }>
  progress(line: string): void
}

const OUTAGE_ANSWER_BOUND_MS = 6000
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const msText = (ms: number) => `${Math.round(ms)} ms`
const is2xx = (o: Outcome) => o.status >= 200 && o.status < 300

function latency(outcomes: Outcome[]): string {
  const ms = outcomes.filter((o) => !o.error).map((o) => o.ms)
  return `p50 ${msText(percentile(ms, 50))}, p99 ${msText(percentile(ms, 99))}, max ${msText(Math.max(0, ...ms))}`
}

/** Phones `+34 6xx xxx xxx` unique per index, with a share of repeats of earlier ones. */
function phonesWithRepeats(n: number, repeatShare: number, base: number, seed: number): string[] {
  const rand = prng(seed)
  const phones: string[] = []
  for (let i = 0; i < n; i++) {
    if (i >= 10 && rand() < repeatShare) phones.push(phones[Math.floor(rand() * i)])
    else phones.push(`+34${600_000_000 + base + i}`)
  }
  return phones
}

/** Waits until the lead-ingest queue holds nothing to do (every job finished or failed for good). */
async function drainIngest(h: HarnessContext, timeoutMs: number): Promise<number> {
  const started = performance.now()
  await until(
    'the lead-ingest queue to drain',
    async () => {
      const c = await h.queues.get('lead-ingest').getJobCounts('waiting', 'active', 'delayed', 'prioritized')
      return c.waiting + c.active + c.delayed + c.prioritized === 0
    },
    timeoutMs,
    200,
  )
  return performance.now() - started
}

/** Ingest figures against the database: accepted distinct phones vs rows of the business. */
async function ingestFigures(h: HarnessContext, businessId: number, phones: string[], outcomes: Outcome[]) {
  const accepted = new Set<string>()
  for (const [i, o] of outcomes.entries()) if (o && is2xx(o)) accepted.add(phones[i])
  const rows = await h.sql<{ phone: string; n: number }[]>`select phone, count(*)::int as n from contacts where business_id = ${businessId} group by phone`
  const stored = new Map(rows.map((r) => [r.phone, r.n]))
  const duplicates = rows.reduce((sum, r) => sum + r.n - 1, 0)
  const lost = [...accepted].filter((p) => !stored.has(p))
  const sentPhones = new Set(phones.slice(0, outcomes.length))
  const unexpected = rows.filter((r) => !sentPhones.has(r.phone)).length
  return { accepted, persisted: rows.reduce((sum, r) => sum + r.n, 0), duplicates, lost, unexpected }
}

function checkAlive(h: HarnessContext, pids: Map<ManagedProcess, number | undefined>, failures: string[]): void {
  for (const [p, pid] of pids) {
    if (!p.alive) failures.push(`${p.name} (pid ${pid}) exited with ${p.exitCode}: ${h.cluster.tail(p, 3)}`)
    else if (p.pid !== pid) failures.push(`${p.name} was restarted (pid ${pid} → ${p.pid})`)
  }
}

const pidsOf = (h: HarnessContext) => new Map([...h.cluster.apis, ...h.cluster.workers].map((p) => [p as ManagedProcess, p.pid]))

// ---------------------------------------------------------------------------------------------

export async function scenarioWorkerKill(h: HarnessContext): Promise<ScenarioResult> {
  const name = `a. ${h.ingests} ingests over both APIs, 20% repeated phones, a lead-ingest worker kill -9'ed mid-run and restarted`
  const biz = await h.newBusiness('a')
  const phones = phonesWithRepeats(h.ingests, 0.2, 0, 1)
  const victim = h.cluster.workers[0]
  const notes: string[] = []
  const failures: string[] = []
  let killedAt = 0
  let restartedAt = 0
  let activeAtKill = -1
  const started = performance.now()
  const outcomes = await drive(
    h.ingests,
    64,
    (i) => request(h.targets, i, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody(phones[i], i, 'a') }),
    async (sent) => {
      if (!killedAt && sent >= h.ingests * 0.3) {
        killedAt = performance.now()
        activeAtKill = await h.queues
          .get('lead-ingest')
          .getActiveCount()
          .catch(() => -1)
        victim.signal('SIGKILL')
        h.progress(`a: kill -9 ${victim.name} (pid ${victim.pid}) after ${sent} requests, ${activeAtKill} jobs active`)
      }
      if (killedAt && !restartedAt && sent >= h.ingests * 0.6 && performance.now() - killedAt > 1000) {
        await victim.waitExit(5000)
        restartedAt = performance.now()
        victim.start()
        h.progress(`a: restarted ${victim.name} (pid ${victim.pid}) after ${sent} requests`)
      }
    },
  )
  const sendMs = performance.now() - started
  if (!killedAt) failures.push('the worker was never killed')
  if (killedAt && !restartedAt) {
    // The run was too short to reach 60% a second after the kill: restart now.
    await victim.waitExit(5000)
    victim.start()
    restartedAt = performance.now()
  }
  await h.cluster.workerReady(victim)
  const drainMs = await drainIngest(h, 120_000).catch((e) => {
    failures.push(String(e.message))
    return Number.NaN
  })
  const f = await ingestFigures(h, biz.id, phones, outcomes)
  const distinctSent = new Set(phones).size
  const notAccepted = outcomes.filter((o) => !is2xx(o))
  if (notAccepted.length) failures.push(`${notAccepted.length} requests not accepted: ${summariseStatuses(notAccepted)}`)
  if (f.lost.length) failures.push(`${f.lost.length} accepted phones have no lead, e.g. ${f.lost.slice(0, 3).join(', ')}`)
  if (f.duplicates) failures.push(`${f.duplicates} duplicate leads`)
  if (f.persisted !== f.accepted.size) failures.push(`leads stored ${f.persisted} ≠ distinct phones accepted ${f.accepted.size}`)
  if (f.unexpected) failures.push(`${f.unexpected} leads with phones never sent`)
  notes.push(`statuses: ${summariseStatuses(outcomes)}; ${outcomes.filter((o) => o.retried).length} retried on the other API`)
  notes.push(`jobs active in the queue at the kill: ${activeAtKill} (a killed worker's jobs return through BullMQ's stalled check)`)
  return {
    name,
    figures: {
      sent: outcomes.length,
      accepted: outcomes.filter(is2xx).length,
      'distinct phones sent': distinctSent,
      'distinct phones accepted': f.accepted.size,
      persisted: f.persisted,
      duplicates: f.duplicates,
      lost: f.lost.length,
    },
    timings: {
      'send time': `${s(sendMs)} (${Math.round(outcomes.length / (sendMs / 1000))} req/s)`,
      latency: latency(outcomes),
      'worker down for': s(restartedAt - killedAt),
      'queue drained after': s(drainMs),
    },
    notes,
    failures,
  }
}

export async function scenarioRedisOutage(h: HarnessContext): Promise<ScenarioResult> {
  const name = 'b. Redis stopped for 10 s during ingest load, then started'
  const biz = await h.newBusiness('b')
  const failures: string[] = []
  const notes: string[] = []
  const pids = pidsOf(h)
  const phones = phonesWithRepeats(200_000, 0, 1_000_000, 2)
  const t0 = performance.now()
  const at = (ms: number) => performance.now() - t0 >= ms
  let stoppedAt = 0
  let startedAt = 0
  const control = (async () => {
    await until('2 s of load', async () => at(2000), 5000, 20)
    stoppedAt = performance.now()
    h.cluster.redis.signal('SIGTERM')
    await h.cluster.redis.waitExit(10_000)
    h.progress(`b: redis-server stopped (pid ${h.cluster.redis.pid})`)
    const readyz = await Promise.all(
      h.cluster.apis.map((a) =>
        fetch(`${h.cluster.baseUrl(a)}/readyz`).then(
          (r) => r.status,
          () => 0,
        ),
      ),
    )
    notes.push(`/readyz while Redis is down: ${readyz.join(', ')}`)
    await until('10 s of outage', async () => performance.now() - stoppedAt >= 10_000, 15_000, 20)
    h.cluster.redis.start()
    await h.cluster.redis.ready()
    startedAt = performance.now()
    h.progress(`b: redis-server started again (pid ${h.cluster.redis.pid}), queue kept by AOF`)
  })()
  const outcomes = await driveFor(
    () => startedAt > 0 && performance.now() - startedAt > 4000,
    250,
    400,
    (i) => request(h.targets, i, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody(phones[i], i, 'b') }),
  )
  await control
  // Workers must resume by themselves: leads accepted now go through Redis, and only a worker
  // can store them (the API stores directly only when Redis refuses).
  const probeFrom = outcomes.length
  const probes = await drive(100, 20, (i) =>
    request(h.targets, i, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody(phones[probeFrom + i], probeFrom + i, 'b') }),
  )
  const probePhones = phones.slice(probeFrom, probeFrom + 100)
  let resumedMs = NaN
  try {
    const t = performance.now()
    await until(
      'workers to store leads queued after the restart',
      async () => {
        const [{ n }] = await h.sql<{ n: number }[]>`select count(*)::int as n from contacts where business_id = ${biz.id} and phone in ${h.sql(probePhones)}`
        return n === probes.filter(is2xx).length
      },
      30_000,
      200,
    )
    resumedMs = performance.now() - t
  } catch (e) {
    failures.push(`workers did not resume: ${(e as Error).message}`)
  }
  const drainMs = await drainIngest(h, 60_000).catch((e) => {
    failures.push(String(e.message))
    return Number.NaN
  })
  const all = [...outcomes, ...probes]
  const f = await ingestFigures(h, biz.id, phones, all)
  const during = outcomes.filter((_, i) => i >= 0).filter((o) => o)
  const non2xx = all.filter((o) => !is2xx(o))
  if (f.lost.length) failures.push(`${f.lost.length} answered 200 but have no lead, e.g. ${f.lost.slice(0, 3).join(', ')}`)
  if (f.duplicates) failures.push(`${f.duplicates} duplicate leads`)
  const badErrors = non2xx.filter((o) => o.error || !String(o.contentType).startsWith('application/problem+json'))
  if (badErrors.length) failures.push(`${badErrors.length} failures without a problem+json answer: ${summariseStatuses(badErrors)}`)
  checkAlive(h, pids, failures)
  const fallbacks = h.cluster
    .allLogs()
    .filter((l) => l.file.startsWith('api-'))
    .reduce((n, l) => n + (l.text.match(/storing the batch directly/g)?.length ?? 0), 0)
  notes.push(`statuses: ${summariseStatuses(all)}; ${fallbacks} batches stored directly by the APIs while Redis was down`)
  const readyz = await Promise.all(
    h.cluster.apis.map((a) =>
      fetch(`${h.cluster.baseUrl(a)}/readyz`).then(
        (r) => r.status,
        () => 0,
      ),
    ),
  )
  notes.push(
    `/readyz after: ${readyz.join(', ')}; no process restarted: ${failures.some((x) => x.includes('restarted') || x.includes('exited')) ? 'no' : 'yes'}`,
  )
  void during
  return {
    name,
    figures: {
      sent: all.length,
      accepted: all.filter(is2xx).length,
      persisted: f.persisted,
      duplicates: f.duplicates,
      lost: f.lost.length,
      'not accepted': non2xx.length,
    },
    timings: {
      latency: latency(all),
      'max latency': msText(Math.max(...all.map((o) => o.ms))),
      'Redis down for': s(startedAt - stoppedAt),
      'workers resumed (probe stored) after': s(resumedMs),
      'queue drained after': s(drainMs),
    },
    notes,
    failures,
  }
}

export async function scenarioPostgresOutage(h: HarnessContext): Promise<ScenarioResult> {
  const name = 'c. PostgreSQL stopped for 10 s under load, then started'
  const biz = await h.newBusiness('c')
  const failures: string[] = []
  const notes: string[] = []
  const pids = pidsOf(h)
  const created = await request(h.targets, 0, 'POST', '/v1/properties', {
    key: biz.apiKey,
    body: propertyBody('c-seed'),
    headers: { 'idempotency-key': 'c-seed' },
  })
  if (created.status !== 201) failures.push(`seed property: ${created.status} ${JSON.stringify(created.body)}`)
  else await request(h.targets, 0, 'POST', `/v1/properties/${created.body.id}/publish`, { key: biz.apiKey })
  const phones = phonesWithRepeats(100_000, 0, 2_000_000, 3)
  const kinds = ['list', 'me', 'create', 'ingest']
  const t0 = performance.now()
  let stoppedAt = 0
  let startedAt = 0
  let recoveredAt = 0
  const sentAt: number[] = []
  const call = (i: number): Promise<Outcome> => {
    sentAt[i] = performance.now()
    switch (kinds[i % kinds.length]) {
      case 'list':
        return request(h.targets, i, 'GET', '/v1/properties?limit=10', { key: biz.apiKey })
      case 'me':
        return request(h.targets, i, 'GET', '/v1/me', { key: biz.apiKey })
      case 'create':
        return request(h.targets, i, 'POST', '/v1/properties', { key: biz.apiKey, body: propertyBody(`c-${i}`), headers: { 'idempotency-key': `c-${i}` } })
      default:
        return request(h.targets, i, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody(phones[i], i, 'c') })
    }
  }
  const control = (async () => {
    await until('2 s of load', async () => performance.now() - t0 >= 2000, 5000, 20)
    stoppedAt = performance.now()
    await h.cluster.pg.stop()
    h.progress(`c: PostgreSQL stopped (pg_ctl stop -m fast) in ${s(performance.now() - stoppedAt)}`)
    await until('10 s of outage', async () => performance.now() - stoppedAt >= 10_000, 15_000, 20)
    await h.cluster.pg.start()
    startedAt = performance.now()
    h.progress('c: PostgreSQL started again')
    // Recovered: both APIs answer a database read and a write.
    await until(
      'both APIs to serve again',
      async () => {
        const r = await Promise.all(
          h.cluster.apis.map(async (a, i) => {
            const base = h.cluster.baseUrl(a)
            const list = await fetch(`${base}/v1/properties?limit=1`, { headers: { 'x-api-key': biz.apiKey } }).then(
              (x) => x.status,
              () => 0,
            )
            const me = await fetch(`${base}/v1/me`, { headers: { 'x-api-key': biz.apiKey } }).then(
              (x) => x.status,
              () => 0,
            )
            return list === 200 && me === 200 && i >= 0
          }),
        )
        return r.every(Boolean)
      },
      30_000,
      100,
    ).catch((e) => failures.push(String(e.message)))
    recoveredAt = performance.now()
    h.progress(`c: both APIs serve again ${s(recoveredAt - startedAt)} after the start`)
  })()
  const outcomes = await driveFor(() => recoveredAt > 0 && performance.now() - recoveredAt > 3000, 150, 300, call)
  await control
  const duringOutage = outcomes.filter((_, i) => sentAt[i] >= stoppedAt + 500 && sentAt[i] < startedAt)
  const afterRecovery = outcomes.filter((_, i) => sentAt[i] >= recoveredAt)
  const hung = outcomes.filter((o) => o.error)
  if (hung.length) failures.push(`${hung.length} requests got no answer (hang, reset or crash): ${summariseStatuses(hung)}`)
  const outageAnswers = duringOutage.filter((o) => !o.error)
  const wrong = outageAnswers.filter((o) => !is2xx(o) && !(o.status === 503 && String(o.contentType).startsWith('application/problem+json')))
  if (wrong.length) failures.push(`${wrong.length} answers during the outage were neither 2xx nor problem+json 503: ${summariseStatuses(wrong)}`)
  // The service's own bound for one connection attempt is connect_timeout (5 s, db/client.ts):
  // an attempt caught by the stop itself can take that long; the rest answer in ~100 ms.
  const slow = outageAnswers.filter((o) => o.ms > OUTAGE_ANSWER_BOUND_MS)
  if (slow.length)
    failures.push(`${slow.length} answers during the outage took over ${s(OUTAGE_ANSWER_BOUND_MS)} (max ${msText(Math.max(...slow.map((o) => o.ms)))})`)
  const over1s = outageAnswers.filter((o) => o.ms > 1000).length
  notes.push(`${over1s} of ${outageAnswers.length} answers during the outage took over 1 s`)
  const failedAfter = afterRecovery.filter((o) => !is2xx(o))
  if (failedAfter.length) failures.push(`${failedAfter.length} requests failed after recovery: ${summariseStatuses(failedAfter)}`)
  if (recoveredAt - startedAt > 10_000) failures.push(`recovery took ${s(recoveredAt - startedAt)} (bound 10 s)`)
  checkAlive(h, pids, failures)
  // Writes: every 201 create is a property; every accepted ingest a lead (after the queue retried).
  const createdIds = outcomes.filter((o, i) => kinds[i % kinds.length] === 'create' && o.status === 201).map((o) => o.body.id as number)
  // A create answered 503 may still have committed (the answer was lost, not the write); a retry
  // with its Idempotency-Key replays it. Duplicates are titles (one per key) stored twice.
  const titles = await h.sql<{ n: number }[]>`select count(*)::int as n from properties where business_id = ${biz.id} group by title`
  const propertyDuplicates = titles.reduce((x, r) => x + r.n - 1, 0)
  const foundProperties = createdIds.length ? (await h.sql<{ id: number }[]>`select id from properties where id in ${h.sql(createdIds)}`).length : 0
  const missingProperties = createdIds.length - foundProperties
  await drainIngest(h, 90_000).catch((e) => failures.push(String(e.message)))
  const ingestOutcomes = outcomes.map((o, i) => (kinds[i % kinds.length] === 'ingest' ? o : ({ status: 0, ms: 0, retried: false } as Outcome)))
  const ingest = await ingestFigures(h, biz.id, phones, ingestOutcomes)
  const ingestLost = ingest.lost.length
  const persistedLeads = ingest.persisted
  if (ingestLost) failures.push(`${ingestLost} ingests answered 200 have no lead`)
  if (missingProperties) failures.push(`${missingProperties} created properties are missing`)
  if (propertyDuplicates) failures.push(`${propertyDuplicates} duplicate properties`)
  const outage503 = duringOutage.filter((o) => o.status === 503)
  notes.push(`statuses during the outage: ${summariseStatuses(duringOutage)}`)
  notes.push(`statuses overall: ${summariseStatuses(outcomes)}`)
  return {
    name,
    figures: {
      sent: outcomes.length,
      accepted: outcomes.filter(is2xx).length,
      persisted: foundProperties + persistedLeads,
      duplicates: propertyDuplicates,
      lost: missingProperties + ingestLost,
      'answered 503 during outage': outage503.length,
      'no answer': hung.length,
    },
    timings: {
      'outage 503 latency': outage503.length
        ? `p50 ${msText(
            percentile(
              outage503.map((o) => o.ms),
              50,
            ),
          )}, max ${msText(Math.max(...outage503.map((o) => o.ms)))}`
        : '-',
      'PostgreSQL down for': s(startedAt - stoppedAt),
      'recovered after start': s(recoveredAt - startedAt),
      latency: latency(outcomes),
    },
    notes,
    failures,
  }
}

export async function scenarioSigterm(h: HarnessContext): Promise<ScenarioResult> {
  const name = 'd. SIGTERM to an API and a worker under load'
  const biz = await h.newBusiness('d')
  const failures: string[] = []
  const notes: string[] = []
  const api = h.cluster.apis[0]
  const worker = h.cluster.workers[0]
  const n = Math.max(1000, Math.min(4000, Math.round(h.ingests * 0.4)))
  const phones = phonesWithRepeats(n, 0, 3_000_000, 4)
  const boundMs = 10_000 + 5000 // SHUTDOWN_TIMEOUT_MS + the hard limit's margin (shared/platform/lifecycle.ts)
  let signalledAt = 0
  const exits: Promise<{ p: ManagedProcess; code: number | null; ms: number }>[] = []
  const call = (i: number) =>
    i % 2 === 0
      ? request(h.targets, i, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody(phones[i], i, 'd') })
      : request(h.targets, i, 'POST', '/v1/properties', { key: biz.apiKey, body: propertyBody(`d-${i}`), headers: { 'idempotency-key': `d-${i}` } })
  const started = performance.now()
  const outcomes = await drive(n, 48, call, (sent) => {
    if (!signalledAt && sent >= n * 0.3) {
      signalledAt = performance.now()
      for (const p of [api, worker]) {
        p.signal('SIGTERM')
        exits.push(p.waitExit(boundMs + 5000).then((code) => ({ p, code, ms: performance.now() - signalledAt })))
      }
      h.progress(`d: SIGTERM to ${api.name} (pid ${api.pid}) and ${worker.name} (pid ${worker.pid}) after ${sent} requests`)
    }
  })
  const sendMs = performance.now() - started
  const exited = await Promise.all(exits)
  for (const e of exited) {
    if (e.code !== 0) failures.push(`${e.p.name} exited with ${e.code === null ? 'nothing (still running)' : e.code} ${s(e.ms)} after SIGTERM`)
    else if (e.ms > boundMs) failures.push(`${e.p.name} took ${s(e.ms)} to exit (bound ${s(boundMs)})`)
    notes.push(`${e.p.name} exited ${e.code} ${s(e.ms)} after SIGTERM: ${h.cluster.tail(e.p, 2)}`)
  }
  const failed = outcomes.filter((o) => !is2xx(o))
  if (failed.length) failures.push(`${failed.length} requests failed: ${summariseStatuses(failed)}`)
  // Properties: every 201 is a row, one per idempotency key.
  const creates = outcomes.map((o, i) => ({ o, i })).filter(({ i }) => i % 2 !== 0)
  const acceptedCreates = creates.filter(({ o }) => o.status === 201)
  const rows = await h.sql<{ title: string; n: number }[]>`select title, count(*)::int as n from properties where business_id = ${biz.id} group by title`
  const byTitle = new Map(rows.map((r) => [r.title, r.n]))
  const lostCreates = acceptedCreates.filter(({ i }) => !byTitle.has(`d-${i}`)).length
  const dupCreates = rows.reduce((sum, r) => sum + r.n - 1, 0)
  const drainMs = await drainIngest(h, 90_000).catch((e) => {
    failures.push(String(e.message))
    return Number.NaN
  })
  const ingestOutcomes = outcomes.map((o, i) => (i % 2 === 0 ? o : ({ status: 0, ms: 0, retried: false } as Outcome)))
  const ingest = await ingestFigures(h, biz.id, phones, ingestOutcomes)
  const lostLeads = ingest.lost.length
  const leadRows = ingest.persisted
  const dupLeads = ingest.duplicates
  if (lostCreates + lostLeads) failures.push(`${lostCreates} accepted creates and ${lostLeads} accepted ingests were lost`)
  if (dupCreates + dupLeads) failures.push(`${dupCreates + dupLeads} duplicates`)
  notes.push(`statuses: ${summariseStatuses(outcomes)}; ${outcomes.filter((o) => o.retried).length} sent again to the other API after a refused connection`)
  // Back to full strength for the next scenario (the harness restarts what it stopped on purpose).
  for (const p of [api, worker]) p.start()
  await h.cluster.apiReady(api)
  await h.cluster.workerReady(worker)
  return {
    name,
    figures: {
      sent: outcomes.length,
      accepted: outcomes.length - failed.length,
      persisted: rows.reduce((x, r) => x + r.n, 0) + leadRows,
      duplicates: dupCreates + dupLeads,
      lost: lostCreates + lostLeads,
      failed: failed.length,
    },
    timings: { 'send time': s(sendMs), latency: latency(outcomes), 'queue drained after': s(drainMs) },
    notes,
    failures,
  }
}

export async function scenarioIdempotency(h: HarnessContext): Promise<ScenarioResult> {
  const name = 'e. Idempotent creates of the same key sent concurrently to both APIs'
  const biz = await h.newBusiness('e')
  const failures: string[] = []
  const keys = 50
  const twins = 8
  const started = performance.now()
  const outcomes = await Promise.all(
    Array.from({ length: keys * twins }, (_, n) => {
      const k = Math.floor(n / twins)
      return request(h.targets, n, 'POST', '/v1/properties', { key: biz.apiKey, body: propertyBody(`e-${k}`), headers: { 'idempotency-key': `e-key-${k}` } })
    }),
  )
  const ms = performance.now() - started
  const rows = await h.sql<{ title: string; id: number }[]>`select title, id from properties where business_id = ${biz.id}`
  const byTitle = new Map<string, number[]>()
  for (const r of rows) byTitle.set(r.title, [...(byTitle.get(r.title) ?? []), r.id])
  let mismatched = 0
  for (let k = 0; k < keys; k++) {
    const ids = new Set(
      outcomes
        .slice(k * twins, (k + 1) * twins)
        .filter((o) => o.status === 201)
        .map((o) => o.body.id),
    )
    const stored = byTitle.get(`e-${k}`) ?? []
    if (ids.size > 1 || (ids.size === 1 && stored[0] !== [...ids][0])) mismatched++
  }
  const duplicates = [...byTitle.values()].reduce((x, ids) => x + ids.length - 1, 0)
  const lost = keys - byTitle.size
  const errors = outcomes.filter((o) => o.status >= 500 || o.error)
  const conflicts = outcomes.filter((o) => o.status === 409)
  if (duplicates) failures.push(`${duplicates} duplicate properties`)
  if (lost) failures.push(`${lost} keys have no property`)
  if (mismatched) failures.push(`${mismatched} keys answered different ids`)
  if (errors.length) failures.push(`${errors.length} errors: ${summariseStatuses(errors)}`)
  const accepted = outcomes.filter((o) => o.status === 201)
  return {
    name,
    figures: {
      sent: outcomes.length,
      accepted: accepted.length,
      persisted: rows.length,
      duplicates,
      lost,
      keys,
      replayed: accepted.filter((o) => o.replayed).length,
      '409 still in progress': conflicts.length,
    },
    timings: { 'all sent and answered in': s(ms), latency: latency(outcomes) },
    notes: [`statuses: ${summariseStatuses(outcomes)} (${twins} twins per key, alternating between the APIs)`],
    failures,
  }
}

export function propertyBody(title: string): Record<string, unknown> {
  return {
    operations: ['venta'],
    type: 'apartamento',
    title,
    pricing: { sale: 250000 },
    location: { city: 'Valencia', address: 'Calle de Colón 12', coordinates: { latitude: 39.4699, longitude: -0.3763 } },
    area: { total: 95 },
    bedrooms: 3,
  }
}
