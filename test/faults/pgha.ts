/**
 * Scenarios on a PostgreSQL primary with a streaming standby (pg-topology.ts), each in
 * its own world: the topology, a redis-server and the service's processes, started for the
 * scenario and stopped after it (logs in the harness's log dir, so the secrets scan reads them).
 *   j. kill -9 of the primary under write load, the standby promoted 1 s later: a multi-host
 *      DATABASE_URL (standby listed first) follows it, every answered write is there once.
 *   o. the same through a PgBouncer per node (transaction mode), the multi-host URL over the
 *      PgBouncers: they replay the parameters of their first server login, so the driver must ask
 *      each connection's live state; 503s until the promotion, then writes again, no 500.
 *   k. a read replica applying WAL 1.5 s late (DATABASE_READ_URL): no read after a write is
 *      stale, and the replica serves a measured share of the other reads.
 */
import { join } from 'node:path'
import postgres from 'postgres'
import { Queues, redisConnection } from '../../shared/platform/queues'
import { PgBouncer } from '../helpers/pgbouncer'
import { freePort } from '../helpers/processes'
import { exec, ManagedProcess, RedisServer, until } from './cluster'
import { driveFor, ingestBody, percentile, request, summariseStatuses, type Outcome, type ScenarioResult, type Target } from './load'
import { PgTopology, type TopologyOptions } from './pg-topology'
import { propertyBody, type HarnessContext } from './scenarios'

const DB = 'property_lead_faults'
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const is2xx = (o: Outcome) => o.status >= 200 && o.status < 300
const isProblem503 = (o: Outcome) => o.status === 503 && String(o.contentType).startsWith('application/problem+json')

interface WorldOptions {
  tag: string
  topology: TopologyOptions
  /** A PgBouncer (transaction mode) in front of each node: [primary's, standby's]. */
  poolers?: boolean
  /** DATABASE_URL (and DATABASE_READ_URL) from the topology and its poolers. */
  env: (t: PgTopology, poolers: PgBouncer[]) => Record<string, string>
  apis: number
  workers: string[]
}

/** A topology, a Redis and the service's processes of one scenario. */
class HaWorld {
  readonly topology: PgTopology
  redis!: RedisServer
  poolers: PgBouncer[] = []
  apis: (ManagedProcess & { port: number })[] = []
  workers: ManagedProcess[] = []
  queues!: Queues
  private producer!: ReturnType<typeof redisConnection>

  constructor(
    private h: HarnessContext,
    private options: WorldOptions,
  ) {
    this.topology = new PgTopology(join(h.cluster.root, `pgha-${options.tag}`), options.topology)
  }

  get env(): Record<string, string> {
    const own = this.options.env(this.topology, this.poolers)
    return {
      ...this.h.cluster.env,
      // The harness cluster's DATABASE_DIRECT_URL names its own PostgreSQL: migrations and LISTEN
      // must reach this topology's nodes instead (the same multi-host list, no pooler here).
      DATABASE_DIRECT_URL: own.DATABASE_URL,
      ...own,
      REDIS_URL: this.redis.url,
      QUEUE_PREFIX: `faults-${this.options.tag}`,
      DATA_DIR: join(this.topology.root, 'data'),
    }
  }

  get targets(): Target[] {
    return this.apis.map((a) => ({ name: a.name, baseUrl: `http://127.0.0.1:${a.port}` }))
  }

  async start(): Promise<void> {
    const { tag } = this.options
    await this.topology.start([DB])
    this.h.progress(
      `${tag}: PostgreSQL primary :${this.topology.primary.port}, standby :${this.topology.standby.port} ` +
        `(${this.options.topology.applyDelayMs ? `applies ${this.options.topology.applyDelayMs} ms late` : 'synchronous'})`,
    )
    if (this.options.poolers) {
      for (const node of [this.topology.primary, this.topology.standby]) {
        const pooler = new PgBouncer({ upstreamPort: node.port, poolSize: 10, queryWaitTimeoutSeconds: 5 })
        await pooler.start()
        this.poolers.push(pooler)
      }
      this.h.progress(`${tag}: PgBouncer (transaction mode) per node: primary's :${this.poolers[0].port}, standby's :${this.poolers[1].port}`)
    }
    this.redis = new RedisServer(await freePort(), join(this.topology.root, 'redis'), this.h.cluster.logDir)
    this.redis.start()
    await this.redis.ready()
    this.producer = redisConnection(this.redis.url, 'producer')
    this.producer.on('error', () => {})
    this.queues = new Queues(this.producer, this.env.QUEUE_PREFIX)
    await exec(['bun', 'run', 'cli/migrate.ts'], { env: this.env })
    for (let i = 0; i < this.options.apis; i++) {
      const port = await freePort()
      this.apis.push(
        Object.assign(
          new ManagedProcess(
            `api-${tag}${i + 1}`,
            ['bun', 'run', 'api/index.ts'],
            { ...this.env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` },
            this.h.cluster.logDir,
          ),
          { port },
        ),
      )
    }
    for (const [i, queues] of this.options.workers.entries()) {
      this.workers.push(
        new ManagedProcess(`worker-${tag}${i + 1}`, ['bun', 'run', 'worker/index.ts'], { ...this.env, WORKER_QUEUES: queues }, this.h.cluster.logDir),
      )
    }
    for (const p of [...this.apis, ...this.workers]) p.start()
    await Promise.all(this.apis.map((a) => this.h.cluster.apiReady(a)))
    await Promise.all(this.workers.map((w) => this.h.cluster.workerReady(w)))
    this.h.progress(`${tag}: ${this.apis.length} API and ${this.workers.length} worker processes`)
  }

  async newBusiness(name: string): Promise<{ id: number; apiKey: string }> {
    const cli = (args: string[]) => exec(['bun', 'run', 'cli/index.ts', ...args], { env: this.env })
    const business = JSON.parse(await cli(['business', 'create', '--name', name, '--json']))
    const key = JSON.parse(
      await cli([
        'key',
        'create',
        '--business',
        String(business.id),
        '--scopes',
        'properties:read,properties:write,leads:read,leads:write,leads:ingest',
        '--json',
      ]),
    )
    return { id: business.id, apiKey: key.api_key }
  }

  pids(): Map<ManagedProcess, number | undefined> {
    return new Map([...this.apis, ...this.workers].map((p) => [p as ManagedProcess, p.pid]))
  }

  checkAlive(pids: Map<ManagedProcess, number | undefined>, failures: string[]): void {
    for (const [p, pid] of pids) {
      if (!p.alive) failures.push(`${p.name} (pid ${pid}) exited with ${p.exitCode}: ${this.h.cluster.tail(p, 3)}`)
      else if (p.pid !== pid) failures.push(`${p.name} was restarted (pid ${pid} → ${p.pid})`)
    }
  }

  async drainIngest(timeoutMs: number): Promise<void> {
    const queue = this.queues.get('lead-ingest')
    await until(
      'the lead-ingest queue to drain',
      async () => {
        const c = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')
        return c.waiting + c.active + c.delayed + c.prioritized === 0
      },
      timeoutMs,
      200,
    ).catch(async (error: Error) => {
      // Say what is left and where, so a stall explains itself in the report.
      const left = await queue.getJobs(['waiting', 'active', 'delayed', 'prioritized'], 0, 9)
      const states = await Promise.all(left.map((j) => j.getState()))
      const described = left.map(
        (j, i) =>
          `${j.id} ${states[i]} attempts ${j.attemptsMade}` +
          `${j.processedOn ? ` processed ${new Date(j.processedOn).toISOString()}` : ''}${j.failedReason ? ` (${j.failedReason})` : ''}`,
      )
      throw new Error(`${error.message}; left: ${described.join('; ') || 'none listed'}`)
    })
  }

  async stop(): Promise<void> {
    await Promise.all([...this.apis, ...this.workers].map((p) => p.stop().catch(() => {})))
    await this.queues?.close().catch(() => {})
    this.producer?.disconnect()
    await this.redis?.stop().catch(() => {})
    for (const pooler of this.poolers) await pooler.stop().catch(() => {})
    await this.topology.stop()
  }
}

async function inWorld(h: HarnessContext, options: WorldOptions, run: (w: HaWorld) => Promise<ScenarioResult>): Promise<ScenarioResult> {
  const world = new HaWorld(h, options)
  try {
    await world.start()
    return await run(world)
  } finally {
    await world.stop()
  }
}

// ---------------------------------------------------------------------------------------------

const RECOVERY_BOUND_MS = 10_000
/** As scenario c: one connection attempt may take connect_timeout (5 s, db/client.ts), plus margin. */
const ANSWER_BOUND_MS = 6000

export function scenarioPrimaryFailover(h: HarnessContext): Promise<ScenarioResult> {
  return inWorld(
    h,
    {
      tag: 'j',
      topology: {},
      env: (t) => ({ DATABASE_URL: t.multiHostUrl(DB) }),
      apis: 2,
      // webhook-delivery runs the outbox relay, whose LISTEN connection must follow the failover too.
      workers: ['lead-ingest', 'lead-ingest,catalogue-reindex,webhook-delivery'],
    },
    (w) => primaryFailover(h, w, 'j', 'j. kill -9 of the PostgreSQL primary under write load, standby promoted 1 s later'),
  )
}

export function scenarioPrimaryFailoverThroughPoolers(h: HarnessContext): Promise<ScenarioResult> {
  return inWorld(
    h,
    {
      tag: 'o',
      topology: {},
      poolers: true,
      // As operators write it: the PgBouncers of both nodes, the primary's first. LISTEN and
      // migrations reach the nodes themselves.
      env: (t, [primary, standby]) => ({
        DATABASE_URL: `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/${DB}?target_session_attrs=read-write`,
        DATABASE_DIRECT_URL: t.multiHostUrl(DB),
      }),
      apis: 2,
      workers: ['lead-ingest', 'lead-ingest,catalogue-reindex,webhook-delivery'],
    },
    (w) => primaryFailover(h, w, 'o', 'o. as j, through a PgBouncer per node (transaction mode), the multi-host URL over the PgBouncers'),
  )
}

async function primaryFailover(h: HarnessContext, w: HaWorld, tag: string, name: string): Promise<ScenarioResult> {
  const failures: string[] = []
  const notes: string[] = []
  const biz = await w.newBusiness(`Faults ${tag}`)
  const pids = w.pids()
  const kinds = ['create', 'ingest', 'lead', 'ingest']
  const sentAt: number[] = []
  let killedAt = 0
  let promotedAt = 0
  let recoveredAt = 0
  const call = (i: number): Promise<Outcome> => {
    sentAt[i] = performance.now()
    switch (kinds[i % kinds.length]) {
      case 'create':
        return request(w.targets, i, 'POST', '/v1/properties', {
          key: biz.apiKey,
          body: propertyBody(`${tag}-${i}`),
          headers: { 'idempotency-key': `${tag}-${i}` },
        })
      case 'lead':
        return request(w.targets, i, 'POST', '/v1/leads', {
          key: biz.apiKey,
          body: { name: `Lead ${tag} ${i}`, email: `${tag}${i}@example.com` },
          headers: { 'idempotency-key': `${tag}l-${i}` },
        })
      default:
        return request(w.targets, i, 'POST', '/v1/leads/ingest', { key: biz.apiKey, body: ingestBody(`+34${610_000_000 + i}`, i, tag) })
    }
  }
  const t0 = performance.now()
  const control = (async () => {
    await until('2 s of load', async () => performance.now() - t0 >= 2000, 5000, 20)
    killedAt = performance.now()
    w.topology.primary.kill9()
    h.progress(`${tag}: primary killed (SIGKILL to the postmaster and its processes)`)
    await until('1 s after the kill', async () => performance.now() - killedAt >= 1000, 3000, 10)
    await w.topology.standby.promote()
    promotedAt = performance.now()
    h.progress(`${tag}: standby promoted (pg_ctl promote, ${s(promotedAt - killedAt)} after the kill)`)
    await until(
      'both APIs to write again',
      async () => {
        const r = await Promise.all(
          w.targets.map((t, i) => request([t], i, 'POST', '/v1/properties', { key: biz.apiKey, body: propertyBody(`${tag}-probe-${i}-${Date.now()}`) })),
        )
        return r.every((o) => o.status === 201)
      },
      30_000,
      50,
    ).catch((e) => failures.push(String(e.message)))
    recoveredAt = performance.now()
    h.progress(`${tag}: both APIs write again ${s(recoveredAt - killedAt)} after the kill`)
  })()
  const outcomes = await driveFor(() => recoveredAt > 0 && performance.now() - recoveredAt > 3000, 150, 300, call)
  await control

  const hung = outcomes.filter((o) => o.error)
  if (hung.length) failures.push(`${hung.length} requests got no answer (hang, reset or crash): ${summariseStatuses(hung)}`)
  const switching = outcomes.filter((_, i) => sentAt[i] >= killedAt && sentAt[i] < recoveredAt)
  const wrong = outcomes.filter((o) => !o.error && !is2xx(o) && !isProblem503(o))
  if (wrong.length) failures.push(`${wrong.length} answers were neither 2xx nor problem+json 503: ${summariseStatuses(wrong)}`)
  const slow = outcomes.filter((o) => !o.error && o.ms > ANSWER_BOUND_MS)
  if (slow.length) failures.push(`${slow.length} answers took over ${s(ANSWER_BOUND_MS)} (max ${Math.round(Math.max(...slow.map((o) => o.ms)))} ms)`)
  const after = outcomes.filter((o, i) => sentAt[i] >= recoveredAt && !is2xx(o))
  if (after.length) failures.push(`${after.length} requests failed after recovery: ${summariseStatuses(after)}`)
  if (recoveredAt - killedAt > RECOVERY_BOUND_MS) failures.push(`writes succeeded again ${s(recoveredAt - killedAt)} after the kill (bound 10 s)`)
  // What a load balancer asks: both APIs say they are ready again, within the same bound.
  let readyAt = 0
  await until(
    '/readyz 200 on both APIs',
    async () => (await Promise.all(w.targets.map((t, i) => request([t], i, 'GET', '/readyz')))).every((o) => o.status === 200),
    Math.max(1000, killedAt + RECOVERY_BOUND_MS - performance.now()),
    50,
  )
    .then(() => {
      readyAt = performance.now()
    })
    .catch(() => failures.push(`/readyz was not 200 on both APIs within ${s(RECOVERY_BOUND_MS)} of the kill`))
  w.checkAlive(pids, failures)

  // Every answered write on the new primary, once.
  const sql = postgres(w.topology.standby.url(DB), { max: 2, onnotice: () => {} })
  try {
    const [{ recovery }] = await sql<{ recovery: boolean }[]>`select pg_is_in_recovery() as recovery`
    if (recovery) failures.push('the promoted standby is still in recovery')
    const answered = (kind: string, status: number) =>
      outcomes.flatMap((o, i) => (kinds[i % kinds.length] === kind && o.status === status ? [o.body.id as number] : []))
    const createdIds = answered('create', 201)
    const leadIds = answered('lead', 201)
    const foundProperties = createdIds.length ? (await sql`select id from properties where id in ${sql(createdIds)}`).length : 0
    const foundLeads = leadIds.length ? (await sql`select id from contacts where id in ${sql(leadIds)}`).length : 0
    const titleDoubles = (
      await sql<{ n: number }[]>`select count(*)::int as n from properties where business_id = ${biz.id} group by title having count(*) > 1`
    ).reduce((x, r) => x + r.n - 1, 0)
    const emailDoubles = (
      await sql<{ n: number }[]>`select count(*)::int as n from contacts where business_id = ${biz.id} and email is not null group by email having count(*) > 1`
    ).reduce((x, r) => x + r.n - 1, 0)
    await w.drainIngest(90_000).catch((e) => failures.push(String(e.message)))
    const ingestPhones = outcomes.flatMap((o, i) => (kinds[i % kinds.length] === 'ingest' && o.status === 200 ? [`+34${610_000_000 + i}`] : []))
    const storedPhones = new Set(
      (await sql<{ phone: string }[]>`select phone from contacts where business_id = ${biz.id} and phone is not null`).map((r) => r.phone),
    )
    const ingestLost = ingestPhones.filter((p) => !storedPhones.has(p)).length
    const lost = createdIds.length - foundProperties + leadIds.length - foundLeads + ingestLost
    if (createdIds.length - foundProperties) failures.push(`${createdIds.length - foundProperties} properties answered 201 are missing on the new primary`)
    if (leadIds.length - foundLeads) failures.push(`${leadIds.length - foundLeads} leads answered 201 are missing on the new primary`)
    if (ingestLost) failures.push(`${ingestLost} ingests answered 200 have no lead`)
    if (titleDoubles + emailDoubles) failures.push(`${titleDoubles + emailDoubles} writes stored twice`)
    const fivexx = outcomes.filter((o) => o.status >= 500)
    notes.push(`statuses while switching: ${summariseStatuses(switching)}`)
    notes.push(`statuses overall: ${summariseStatuses(outcomes)}`)
    notes.push(`DATABASE_URL: ${w.env.DATABASE_URL}`)
    return {
      name,
      figures: {
        sent: outcomes.length,
        accepted: outcomes.filter(is2xx).length,
        persisted: foundProperties + foundLeads + (ingestPhones.length - ingestLost),
        duplicates: titleDoubles + emailDoubles,
        lost,
        '5xx': fivexx.length,
        '503': outcomes.filter((o) => o.status === 503).length,
        '500': outcomes.filter((o) => o.status === 500).length,
        'no answer': hung.length,
      },
      timings: {
        'kill → promotion': s(promotedAt - killedAt),
        'writes again after the kill': s(recoveredAt - killedAt),
        'writes again after the promotion': s(recoveredAt - promotedAt),
        '/readyz on both APIs, asked when the load ends': readyAt ? `200, ${s(readyAt - killedAt)} after the kill` : 'not 200 within the bound',
        '503 latency': fivexx.length
          ? `p50 ${Math.round(
              percentile(
                fivexx.map((o) => o.ms),
                50,
              ),
            )} ms, max ${Math.round(Math.max(...fivexx.map((o) => o.ms)))} ms`
          : '-',
      },
      notes,
      failures,
    }
  } finally {
    await sql.end({ timeout: 2 })
  }
}

// ---------------------------------------------------------------------------------------------

const APPLY_DELAY_MS = 1500

export function scenarioReadYourWrites(h: HarnessContext): Promise<ScenarioResult> {
  return inWorld(
    h,
    {
      tag: 'k',
      topology: { applyDelayMs: APPLY_DELAY_MS, synchronous: false },
      env: (t) => ({ DATABASE_URL: t.primary.url(DB), DATABASE_READ_URL: t.standby.url(DB) }),
      apis: 2,
      workers: [],
    },
    (w) => readYourWrites(w),
  )
}

async function readYourWrites(w: HaWorld): Promise<ScenarioResult> {
  const name = `k. read-your-writes with a read replica applying WAL ${APPLY_DELAY_MS / 1000} s late`
  const failures: string[] = []
  const notes: string[] = []
  const writer = await w.newBusiness('Faults k writer')
  const reader = await w.newBusiness('Faults k reader')
  const [a, b] = w.targets
  const ids: number[] = []
  for (const [biz, n] of [
    [writer, 8],
    [reader, 20],
  ] as const) {
    for (let i = 0; i < n; i++) {
      const created = await request([a], i, 'POST', '/v1/properties', { key: biz.apiKey, body: propertyBody(`k-${biz.id}-${i}`) })
      if (created.status !== 201) throw new Error(`seed property: ${created.status} ${JSON.stringify(created.body)}`)
      const published = await request([a], i, 'POST', `/v1/properties/${created.body.id}/publish`, { key: biz.apiKey })
      if (published.status !== 200) throw new Error(`seed publish: ${published.status} ${JSON.stringify(published.body)}`)
      if (biz === writer) ids.push(created.body.id)
    }
  }
  const replica = postgres(w.topology.standby.url(DB), { max: 2, onnotice: () => {} })
  // Until the seed is on the replica, every read would be its business's own write.
  await until('the seed on the replica', async () => (await replica`select count(*)::int as n from catalogue_entries`)[0].n === 28, 10_000)
  const before = await Promise.all(w.targets.map((t) => readCounts(t.baseUrl)))

  // Writers: PATCH a title on one API, read it at once on the other (by id and in the list).
  let readsAfterWrite = 0
  let stale = 0
  let directStale = 0
  let directChecked = 0
  const errors: string[] = []
  const deadline = performance.now() + 12_000
  const writerLoop = async (lane: number) => {
    for (let n = 0; performance.now() < deadline; n++) {
      const id = ids[lane]
      const title = `k-${lane}-${n}`
      const patched = await request([a], n, 'PATCH', `/v1/properties/${id}`, { key: writer.apiKey, body: { title } })
      if (patched.status !== 200) {
        errors.push(`PATCH ${patched.status}`)
        continue
      }
      const one = await request([b], n, 'GET', `/v1/properties/${id}`, { key: writer.apiKey })
      const list = await request([b], n, 'GET', '/v1/properties?limit=50', { key: writer.apiKey })
      readsAfterWrite += 2
      if (one.status !== 200 || list.status !== 200) errors.push(`GET ${one.status}/${list.status}`)
      if (one.body?.data?.title !== title) stale++
      if (list.body?.data?.find((p: { id: number }) => p.id === id)?.title !== title) stale++
      // The control: the replica itself, read directly at the same moment, is behind.
      if (n % 4 === 0) {
        directChecked++
        const [row] = await replica<{ title: string }[]>`select doc->>'title' as title from catalogue_entries where property_id = ${id}`
        if (row?.title !== title) directStale++
      }
    }
  }
  // Readers: another business that writes nothing; its reads are the replica's to serve.
  let otherReads = 0
  const readerLoop = async (lane: number) => {
    for (let n = 0; performance.now() < deadline; n++) {
      const r = await request([lane % 2 ? a : b], n, 'GET', '/v1/properties?limit=10', { key: reader.apiKey })
      otherReads++
      if (r.status !== 200) errors.push(`reader GET ${r.status}`)
    }
  }
  await Promise.all([...ids.map((_, i) => writerLoop(i)), ...[0, 1, 2, 3].map(readerLoop)])
  await replica.end({ timeout: 2 })
  const after = await Promise.all(w.targets.map((t) => readCounts(t.baseUrl)))
  const delta = (target: string, reason?: string) => after.reduce((sum, m, i) => sum + sumOf(m, target, reason) - sumOf(before[i], target, reason), 0)
  const byReplica = delta('replica')
  const byPrimary = delta('primary')
  const ownWrite = delta('primary', 'own-write')

  if (stale) failures.push(`${stale} of ${readsAfterWrite} reads after a write were stale`)
  if (errors.length) failures.push(`${errors.length} requests failed: ${[...new Set(errors)].slice(0, 5).join(', ')}`)
  if (directStale === 0) failures.push(`the replica was never behind when read directly (${directChecked} checks): the scenario proves nothing`)
  if (byReplica === 0) failures.push('the replica served no read')
  notes.push(
    `reads routed (both APIs, db_reads_total): ${after.map((m, i) => [...m].map(([k, v]) => `${k}=${v - (before[i].get(k) ?? 0)}`).join(' ')).join(' | ')}`,
  )
  notes.push(`the replica read directly right after a write was behind ${directStale} times of ${directChecked}`)
  return {
    name,
    figures: {
      sent: readsAfterWrite + otherReads,
      accepted: readsAfterWrite + otherReads - errors.filter((e) => e.startsWith('GET') || e.startsWith('reader')).length,
      persisted: 0,
      duplicates: 0,
      lost: 0,
      'reads after a write': readsAfterWrite,
      'stale reads after a write': stale,
      'other reads': otherReads,
      'served by the replica': `${byReplica} of ${byReplica + byPrimary} (${((100 * byReplica) / Math.max(1, byReplica + byPrimary)).toFixed(1)}%)`,
      'to the primary for an own write': ownWrite,
      '5xx': errors.filter((e) => / 5\d\d/.test(e)).length,
    },
    timings: {
      'replica apply delay': `${APPLY_DELAY_MS} ms`,
      load: '12 s, 8 writers (PATCH, then GET by id and list on the other API), 4 readers of another business',
    },
    notes,
    failures,
  }
}

async function readCounts(baseUrl: string): Promise<Map<string, number>> {
  const text = await fetch(`${baseUrl}/metrics`).then((r) => r.text())
  const counts = new Map<string, number>()
  for (const m of text.matchAll(/^db_reads_total\{target="(\w+)",reason="([\w-]+)"\} (\d+)$/gm)) counts.set(`${m[1]}/${m[2]}`, Number(m[3]))
  return counts
}

function sumOf(counts: Map<string, number>, target: string, reason?: string): number {
  let sum = 0
  for (const [k, v] of counts) if (k.startsWith(`${target}/`) && (reason === undefined || k === `${target}/${reason}`)) sum += v
  return sum
}
