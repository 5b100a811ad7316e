/**
 * Scenario n (contract §16.4, docs/forms.md "When Redis is down"): publishable-key traffic from
 * a landing page's origin to both APIs while Redis is stopped for 8 s. The limiter fails open to
 * per-process counts: every lead a page sends is still taken (stored by the ingest's PostgreSQL
 * fallback) and none is lost; a client over its per-address limit is still refused, by each
 * process on its own; once Redis is back, the counts are shared by the processes again.
 */
import { until } from './cluster'
import { driveFor, ingestBody, percentile, request, summariseStatuses, type Outcome, type ScenarioResult } from './load'
import type { HarnessContext } from './scenarios'

const ORIGIN = 'https://landing.example.com'
const OUTAGE_MS = 8000
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const is2xx = (o: Outcome) => o.status >= 200 && o.status < 300

async function publishableKey(h: HarnessContext, businessId: number, ratePerIp: string): Promise<string> {
  const out = await h.cluster.cli(
    ['key', 'create', '--business', String(businessId), '--publishable', '--origins', ORIGIN, '--rate-per-ip', ratePerIp, '--rate', '1000000/min', '--json'],
    { secret: true },
  )
  return JSON.parse(out).api_key
}

/** `count` ingests of one client (the harness is one address) to one API: their statuses. */
async function burst(baseUrl: string, key: string, count: number, phoneBase: number): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${baseUrl}/v1/leads/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, origin: ORIGIN },
      body: JSON.stringify(ingestBody(`+34${phoneBase + i}`, i, 'n-burst')),
    })
    await res.arrayBuffer()
    statuses.push(res.status)
  }
  return statuses
}

async function fallbacks(h: HarnessContext): Promise<number> {
  const texts = await Promise.all(
    h.targets.map((t) =>
      fetch(`${t.baseUrl}/metrics`).then(
        (r) => r.text(),
        () => '',
      ),
    ),
  )
  return texts.reduce((n, t) => n + Number(/^rate_limit_fallbacks_total (\d+)$/m.exec(t)?.[1] ?? 0), 0)
}

export async function scenarioRedisDownPublishable(h: HarnessContext): Promise<ScenarioResult> {
  const name = `n. Redis stopped for ${OUTAGE_MS / 1000} s while publishable-key traffic arrives from a landing page`
  const failures: string[] = []
  const notes: string[] = []
  const biz = await h.newBusiness('n')
  // The harness is one client address: the traffic key's per-address limit is out of the way, the probes' is small.
  const traffic = await publishableKey(h, biz.id, '1000000/min')
  const phones = Array.from({ length: 100_000 }, (_, i) => `+34${611_000_000 + i}`)
  const t0 = performance.now()
  let stoppedAt = 0
  let startedAt = 0
  const during: { statuses: number[][]; fallbacks: number } = { statuses: [], fallbacks: 0 }
  const control = (async () => {
    await until('2 s of traffic', async () => performance.now() - t0 >= 2000, 5000, 20)
    const fallbacksBefore = await fallbacks(h)
    stoppedAt = performance.now()
    h.cluster.redis.signal('SIGTERM')
    await h.cluster.redis.waitExit(10_000)
    h.progress('n: redis-server stopped')
    // One client over its per-address limit (3/min) on each API while Redis is down: each process refuses past its own count.
    const probe = await publishableKey(h, biz.id, '3/min')
    during.statuses = await Promise.all(h.targets.map((t, i) => burst(t.baseUrl, probe, 6, 612_000_000 + i * 100)))
    during.fallbacks = (await fallbacks(h)) - fallbacksBefore
    await until('the outage', async () => performance.now() - stoppedAt >= OUTAGE_MS, OUTAGE_MS + 5000, 20)
    h.cluster.redis.start()
    await h.cluster.redis.ready()
    startedAt = performance.now()
    h.progress('n: redis-server started again')
  })()
  const outcomes = await driveFor(
    () => startedAt > 0 && performance.now() - startedAt > 3000,
    100,
    200,
    (i) => request(h.targets, i, 'POST', '/v1/leads/ingest', { key: traffic, body: ingestBody(phones[i], i, 'n'), headers: { origin: ORIGIN } }),
  )
  await control

  // After the outage the count is shared again: one client, 3/min, alternating between the APIs.
  let shared: number[] = []
  await until(
    'limits shared again through Redis',
    async () => {
      // A fresh key per attempt: an attempt made while a process still counted alone leaves nothing behind.
      const after = await publishableKey(h, biz.id, '3/min')
      shared = []
      for (let i = 0; i < 5; i++) shared.push((await burst(h.targets[i % 2].baseUrl, after, 1, 613_000_000 + i * 7 + Math.floor(Math.random() * 1000)))[0])
      return shared.join(',') === '200,200,200,429,429'
    },
    15_000,
    500,
  ).catch(() => failures.push(`after Redis came back, one client's 3/min over both APIs answered ${shared.join(', ')} (expected 200, 200, 200, 429, 429)`))

  const accepted = new Set(outcomes.map((o, i) => (is2xx(o) ? phones[i] : '')).filter(Boolean))
  let stored = new Set<string>()
  await until(
    'every accepted lead to be stored',
    async () => {
      const rows = await h.sql<{ phone: string }[]>`select phone from contacts where business_id = ${biz.id} and source = 'faults-n'`
      stored = new Set(rows.map((r) => r.phone))
      return [...accepted].every((p) => stored.has(p))
    },
    60_000,
    250,
  ).catch(() => {})
  const lost = [...accepted].filter((p) => !stored.has(p))
  const notAccepted = outcomes.filter((o) => !is2xx(o))
  if (lost.length) failures.push(`${lost.length} leads answered 200 were not stored, e.g. ${lost.slice(0, 3).join(', ')}`)
  if (notAccepted.length)
    failures.push(`${notAccepted.length} publishable-key ingests were not accepted (fail open expected): ${summariseStatuses(notAccepted)}`)
  for (const [i, statuses] of during.statuses.entries()) {
    if (statuses.join(',') !== '200,200,200,429,429,429')
      failures.push(
        `${h.targets[i].name} while Redis was down: one client's 6 requests at 3/min ` +
          `answered ${statuses.join(', ')} (expected 3 × 200 then 3 × 429, counted in the process)`,
      )
  }
  if (during.fallbacks <= 0) failures.push('rate_limit_fallbacks_total did not move while Redis was down')
  const ms = outcomes.filter((o) => !o.error).map((o) => o.ms)
  notes.push(`statuses of the page's traffic: ${summariseStatuses(outcomes)}`)
  notes.push(
    `while Redis was down, per API, one client at 3/min sending ` +
      `6: ${during.statuses.map((x) => x.join(' ')).join(' | ')}; limiter fallbacks counted: ${during.fallbacks}`,
  )
  notes.push(`after: one client at 3/min over both APIs: ${shared.join(' ')}`)
  return {
    name,
    figures: {
      sent: outcomes.length,
      accepted: accepted.size,
      persisted: [...accepted].filter((p) => stored.has(p)).length,
      duplicates: 0,
      lost: lost.length,
      'not accepted': notAccepted.length,
    },
    timings: { latency: `p50 ${Math.round(percentile(ms, 50))} ms, p99 ${Math.round(percentile(ms, 99))} ms`, 'Redis down for': s(startedAt - stoppedAt) },
    notes,
    failures,
  }
}
