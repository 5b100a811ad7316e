/**
 * Fault scenarios of events and webhooks (contract §10): a webhook worker kill -9'ed mid-delivery
 * (every event delivered at least once, the same webhook-id on every attempt), PostgreSQL
 * restarted during a burst of writes (no event lost, none without its change), and a receiver
 * down for the whole run (attempts accumulate, the endpoint is disabled at the bound, others
 * keep receiving). The cluster runs with WEBHOOK_ALLOW_HOSTS=127.0.0.1 and short webhook bounds
 * (run.ts).
 */
import { Webhook } from 'standardwebhooks'
import { until } from './cluster'
import { drive, pace, request, summariseStatuses, type ScenarioResult } from './load'
import type { HarnessContext } from './scenarios'

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const is2xx = (status: number) => status >= 200 && status < 300
/** Events of a business recorded but not yet relayed (docs/events.md "The outbox"). */
const outboxRows = async (h: HarnessContext, businessId: number) =>
  (await h.sql<{ n: number }[]>`select count(*)::int as n from event_outbox where business_id = ${businessId}`)[0].n

/** A receiver on loopback: every request's webhook-id, whether its signature verified, and when it came. */
function receiver(secretOf: () => string | undefined, delayMs = 0) {
  const got: { id: string; bodyId: string; verified: boolean; at: number }[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const body = await req.text()
      const headers = Object.fromEntries(req.headers)
      let verified = false
      try {
        const secret = secretOf()
        verified = secret !== undefined && !!new Webhook(secret).verify(body, headers)
      } catch {}
      let bodyId = ''
      try {
        bodyId = JSON.parse(body).id
      } catch {}
      got.push({ id: headers['webhook-id'] ?? '', bodyId, verified, at: performance.now() })
      if (delayMs) await pace(delayMs) // a receiver slow to answer
      return new Response(null, { status: 204 })
    },
  })
  return { got, url: (path: string) => `http://127.0.0.1:${server.port}${path}`, stop: () => server.stop(true) }
}

async function createEndpoint(h: HarnessContext, apiKey: string, url: string, events: string[]): Promise<{ id: number; secret: string }> {
  const res = await request(h.targets, 0, 'POST', '/v1/webhook_endpoints', { key: apiKey, body: { url, enabled_events: events } })
  if (res.status !== 201) throw new Error(`creating the endpoint answered ${res.status}: ${JSON.stringify(res.body)}`)
  return { id: res.body.data.id, secret: res.body.data.secret }
}

export async function scenarioWebhookWorkerKill(h: HarnessContext): Promise<ScenarioResult> {
  const name = "f. 2,000 lead.created deliveries; a webhook-delivery worker kill -9'ed mid-delivery and restarted"
  const failures: string[] = []
  const notes: string[] = []
  const biz = await h.newBusiness('f')
  let secret: string | undefined
  const rx = receiver(() => secret, 25)
  const endpoint = await createEndpoint(h, biz.apiKey, rx.url('/f'), ['lead.created'])
  secret = endpoint.secret
  const n = 2000
  let killedAt = 0
  let restartedAt = 0
  const started = performance.now()
  const outcomes = await drive(n, 32, (i) =>
    request(h.targets, i, 'POST', '/v1/leads', { key: biz.apiKey, body: { name: `Webhook f ${i}`, email: `f${i}@faults.example` } }),
  )
  // Kill, once a fifth has been delivered, the worker process running the endpoint's runner.
  await until('a fifth of the deliveries', async () => rx.got.length >= n / 5, 60_000, 20)
  const running = await until(
    "the endpoint's runner to be active",
    async () => {
      const active = await h.queues.get('webhook-delivery').getActive()
      const job = active.find((j) => j.data?.endpointId === endpoint.id && j.processedBy)
      const pid = job && Number(job.processedBy!.split(':').pop())
      return h.cluster.workers.find((w) => w.pid === pid)
    },
    30_000,
    5,
  )
  const victim = running
  killedAt = performance.now()
  victim.signal('SIGKILL')
  h.progress(`f: kill -9 ${victim.name} (pid ${victim.pid}), which runs the endpoint's runner, after ${rx.got.length} deliveries`)
  await victim.waitExit(5000)
  await pace(1000) // the worker stays down a second
  victim.start()
  restartedAt = performance.now()
  await h.cluster.workerReady(victim)
  h.progress(`f: restarted ${victim.name} (pid ${victim.pid})`)
  await until('the relay to take every event from the outbox', async () => (await outboxRows(h, biz.id)) === 0, 60_000, 200)
  const events = await h.sql<
    { id: string; object_id: number }[]
  >`select id, (data->'object'->>'id')::int as object_id from events where business_id = ${biz.id} and type = 'lead.created'`
  const eventIds = new Set(events.map((e) => e.id))
  let deliveredMs = NaN
  try {
    await until(
      'every event delivered',
      async () => {
        const seen = new Set(rx.got.map((g) => g.id))
        return [...eventIds].every((id) => seen.has(id))
      },
      120_000,
      200,
    )
    deliveredMs = performance.now() - started
  } catch (e) {
    failures.push((e as Error).message)
  }
  const accepted = outcomes.filter((o) => is2xx(o.status)).length
  const seen = new Map<string, number>()
  for (const g of rx.got) seen.set(g.id, (seen.get(g.id) ?? 0) + 1)
  const lost = [...eventIds].filter((id) => !seen.has(id))
  const duplicates = [...seen.values()].reduce((x, c) => x + c - 1, 0)
  const mismatched = rx.got.filter((g) => g.id !== g.bodyId).length
  const unverified = rx.got.filter((g) => !g.verified).length
  const leads = (await h.sql<{ n: number }[]>`select count(*)::int as n from contacts where business_id = ${biz.id}`)[0].n
  if (accepted !== n) failures.push(`${n - accepted} creates not accepted: ${summariseStatuses(outcomes.filter((o) => !is2xx(o.status)))}`)
  if (events.length !== leads) failures.push(`${leads} leads but ${events.length} lead.created events`)
  if (lost.length) failures.push(`${lost.length} events never delivered, e.g. ${lost.slice(0, 3).join(', ')}`)
  if (mismatched) failures.push(`${mismatched} requests whose webhook-id is not their event's id`)
  if (unverified) failures.push(`${unverified} requests whose signature the standardwebhooks package refused`)
  const retried = (await h.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where endpoint_id = ${endpoint.id} and attempts > 1`)[0].n
  notes.push(
    `${duplicates} deliveries received twice (at-least-once: a killed runner's claimed deliveries are sent again once ` +
      `their lease ends); every request's webhook-id is its event's id and verified with the standardwebhooks package`,
  )
  notes.push(`${retried} deliveries made more than one attempt`)
  rx.stop()
  return {
    name,
    figures: { sent: n, accepted, persisted: leads, events: events.length, delivered: seen.size, duplicates, lost: lost.length },
    timings: { 'worker down for': s(restartedAt - killedAt), 'all delivered after': s(deliveredMs) },
    notes,
    failures,
  }
}

export async function scenarioEventsPostgresRestart(h: HarnessContext): Promise<ScenarioResult> {
  const name = 'g. PostgreSQL restarted during a burst of lead and property writes: no event lost, none without its change'
  const failures: string[] = []
  const notes: string[] = []
  const biz = await h.newBusiness('g')
  let stoppedAt = 0
  let startedAt = 0
  const t0 = performance.now()
  const control = (async () => {
    await until('1.5 s of writes', async () => performance.now() - t0 >= 1500, 5000, 20)
    stoppedAt = performance.now()
    await h.cluster.pg.stop()
    h.progress('g: PostgreSQL stopped')
    await pace(3000) // the outage lasts 3 s
    await h.cluster.pg.start()
    startedAt = performance.now()
    h.progress('g: PostgreSQL started again')
  })()
  const n = 3000
  const outcomes = await drive(n, 24, async (i) => {
    // Keep the burst going across the outage, at a slower pace while the database is down.
    if (stoppedAt && !startedAt) await pace(50)
    return i % 3 === 2
      ? request(h.targets, i, 'POST', '/v1/properties', {
          key: biz.apiKey,
          body: {
            operations: ['venta'],
            type: 'apartamento',
            title: `g-${i}`,
            pricing: { sale: 100000 + i },
            location: { city: 'Valencia' },
            area: { total: 80 },
          },
        })
      : request(h.targets, i, 'POST', '/v1/leads', { key: biz.apiKey, body: { name: `Webhook g ${i}`, email: `g${i}@faults.example` } })
  })
  await control
  const acceptedLeads = outcomes.filter((o, i) => i % 3 !== 2 && o.status === 201).map((o) => o.body.id as number)
  const acceptedProps = outcomes.filter((o, i) => i % 3 === 2 && o.status === 201).map((o) => o.body.id as number)
  // Every change committed has its event and every event its change, whatever was answered.
  await until('the relay to take every event from the outbox', async () => (await outboxRows(h, biz.id)) === 0, 60_000, 200)
  const leads = await h.sql<{ id: number }[]>`select id from contacts where business_id = ${biz.id}`
  const props = await h.sql<{ id: number }[]>`select id from properties where business_id = ${biz.id}`
  const events = await h.sql<
    { type: string; object_id: number; sequence: string }[]
  >`select type, (data->'object'->>'id')::int as object_id, sequence from events where business_id = ${biz.id} order by sequence`
  const leadEvents = new Set(events.filter((e) => e.type === 'lead.created').map((e) => e.object_id))
  const propEvents = new Set(events.filter((e) => e.type === 'property.created').map((e) => e.object_id))
  const leadIds = new Set(leads.map((r) => r.id))
  const propIds = new Set(props.map((r) => r.id))
  const changesWithoutEvent = [...leadIds].filter((id) => !leadEvents.has(id)).length + [...propIds].filter((id) => !propEvents.has(id)).length
  const eventsWithoutChange = [...leadEvents].filter((id) => !leadIds.has(id)).length + [...propEvents].filter((id) => !propIds.has(id)).length
  const lostAnswered = acceptedLeads.filter((id) => !leadIds.has(id)).length + acceptedProps.filter((id) => !propIds.has(id)).length
  const sequences = events.map((e) => Number(e.sequence))
  const gapless = sequences.every((v, i) => v === i + 1)
  if (changesWithoutEvent) failures.push(`${changesWithoutEvent} changes without their event`)
  if (eventsWithoutChange) failures.push(`${eventsWithoutChange} events without their change`)
  if (lostAnswered) failures.push(`${lostAnswered} writes answered 201 are missing`)
  if (events.length !== leads.length + props.length) failures.push(`${events.length} events for ${leads.length + props.length} changes`)
  if (!gapless) failures.push(`sequences are not 1..${events.length} without gaps or repeats`)
  const errors = outcomes.filter((o) => o.status !== 201 && !(o.status === 503))
  if (errors.length) failures.push(`${errors.length} answers neither 201 nor 503: ${summariseStatuses(errors)}`)
  notes.push(`statuses: ${summariseStatuses(outcomes)}; a 503 during the outage may still have committed (then its event exists too)`)
  return {
    name,
    figures: {
      sent: n,
      accepted: acceptedLeads.length + acceptedProps.length,
      persisted: leads.length + props.length,
      events: events.length,
      duplicates: 0,
      lost: lostAnswered + changesWithoutEvent,
    },
    timings: { 'PostgreSQL down for': s(startedAt - stoppedAt) },
    notes,
    failures,
  }
}

export async function scenarioReceiverDown(h: HarnessContext, disableAfterMs: number): Promise<ScenarioResult> {
  const name =
    `h. one business's receiver down for the whole run: attempts accumulate, ` +
    `disabled at the bound (${s(disableAfterMs)}); another business keeps receiving`
  const failures: string[] = []
  const notes: string[] = []
  const [down, up] = [await h.newBusiness('h-down'), await h.newBusiness('h-up')]
  // A port nothing listens on: every attempt is a refused connection.
  const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const closedPort = closed.port
  closed.stop(true)
  let upSecret: string | undefined
  const rx = receiver(() => upSecret)
  const downEndpoint = await createEndpoint(h, down.apiKey, `http://127.0.0.1:${closedPort}/down`, ['lead.created'])
  upSecret = (await createEndpoint(h, up.apiKey, rx.url('/up'), ['lead.created'])).secret
  const t0 = performance.now()
  let i = 0
  let disabledAt = 0
  const sent = { down: 0, up: 0 }
  while (performance.now() - t0 < disableAfterMs + 6000) {
    const [a, b] = await Promise.all([
      request(h.targets, i, 'POST', '/v1/leads', { key: down.apiKey, body: { name: `Down ${i}`, email: `down${i}@faults.example` } }),
      request(h.targets, i + 1, 'POST', '/v1/leads', { key: up.apiKey, body: { name: `Up ${i}`, email: `up${i}@faults.example` } }),
    ])
    if (a.status === 201) sent.down++
    if (b.status === 201) sent.up++
    i += 2
    if (!disabledAt) {
      const [row] = await h.sql<{ status: string }[]>`select status from webhook_endpoints where id = ${downEndpoint.id}`
      if (row.status === 'disabled') disabledAt = performance.now()
    }
    await pace(200)
  }
  const [endpoint] = await h.sql<
    { status: string; disabled_reason: string | null }[]
  >`select status, disabled_reason from webhook_endpoints where id = ${downEndpoint.id}`
  const [attempts] = await h.sql<
    { n: number; first: Date; last: Date }[]
  >`select count(*)::int as n, min(attempted_at) as first, max(attempted_at) as last from webhook_attempts where endpoint_id = ${downEndpoint.id}`
  const [pending] = await h.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where endpoint_id = ${downEndpoint.id} and state = 'pending'`
  await until('the relay to take every event from the outbox', async () => (await outboxRows(h, up.id)) === 0, 60_000, 200).catch((e) =>
    failures.push((e as Error).message),
  )
  const upEvents = await h.sql<{ id: string }[]>`select id from events where business_id = ${up.id} and type = 'lead.created'`
  await until(
    "the other business's deliveries",
    async () => {
      const seen = new Set(rx.got.map((g) => g.id))
      return upEvents.every((e) => seen.has(e.id))
    },
    30_000,
    200,
  ).catch((e) => failures.push((e as Error).message))
  const seen = new Set(rx.got.map((g) => g.id))
  const upLost = upEvents.filter((e) => !seen.has(e.id)).length
  const failingFor = attempts.n ? new Date(attempts.last).getTime() - new Date(attempts.first).getTime() : 0
  if (endpoint.status !== 'disabled') failures.push(`the down endpoint is ${endpoint.status} after ${s(performance.now() - t0)}`)
  if (!endpoint.disabled_reason?.includes('failing continuously')) failures.push(`disabled_reason: ${endpoint.disabled_reason}`)
  if (attempts.n < 5) failures.push(`only ${attempts.n} attempts to the down endpoint`)
  if (failingFor < disableAfterMs - 500) failures.push(`disabled after failing for ${s(failingFor)}, before the bound`)
  if (pending.n) failures.push(`${pending.n} deliveries to the disabled endpoint still pending`)
  if (upLost) failures.push(`${upLost} of the other business's events not delivered`)
  if (rx.got.some((g) => !g.verified)) failures.push('a delivery to the other business failed signature verification')
  notes.push(`disabled_reason: "${endpoint.disabled_reason}"`)
  rx.stop()
  return {
    name,
    figures: {
      sent: sent.down + sent.up,
      accepted: sent.down + sent.up,
      persisted: sent.down + sent.up,
      'attempts to the down endpoint': attempts.n,
      'other business delivered': seen.size,
      duplicates: 0,
      lost: upLost,
    },
    timings: { 'failing before disabled': s(failingFor), 'disabled after the run began': disabledAt ? s(disabledAt - t0) : '-' },
    notes,
    failures,
  }
}
