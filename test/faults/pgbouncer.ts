/**
 * Scenarios i and m (contract §14): the service through PgBouncer in transaction
 * pooling mode. Each starts its own topology on loopback (a private PostgreSQL, a PgBouncer in
 * front of it, a private Redis, API and worker processes whose DATABASE_URL is the pooler and
 * DATABASE_DIRECT_URL PostgreSQL) and stops it afterwards.
 *  i. The mixed workload (test/helpers/mixed-workload.ts) from 16 clients over 2 APIs through a 5-connection pool:
 *     0 errors, every answered write stored.
 *  m. 2 API + 4 worker processes (about 120 client connections) through one PgBouncer with
 *     default_pool_size 20, under ingest and catalogue load: PostgreSQL sees at most 20 server
 *     connections from the pooler (the peak is sampled from SHOW SERVERS), nothing fails.
 */
import postgres from 'postgres'
import { Queues, redisConnection } from '../../shared/platform/queues'
import { failedAnswers, missingWrites, runMixedWorkload } from '../helpers/mixed-workload'
import { PgBouncer } from '../helpers/pgbouncer'
import { propertyBody } from '../helpers/property-body'
import { Cluster, until, type ManagedProcess } from './cluster'
import { drive, ingestBody, pace, request, summariseStatuses, type Outcome, type ScenarioResult, type Target } from './load'

const DATABASE = 'property_lead_faults'
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const is2xx = (o: { status: number }) => o.status >= 200 && o.status < 300

/** What a scenario gets from its own topology. */
interface Topology {
  cluster: Cluster
  bouncer: PgBouncer
  /** PostgreSQL directly, for the checks. */
  sql: postgres.Sql
  queues: Queues
  targets: Target[]
  apiKey: string
}

async function withTopology<T>(
  options: { poolSize: number; workers: string[]; env?: Record<string, string>; progress: (line: string) => void },
  run: (t: Topology) => Promise<T>,
): Promise<T> {
  let bouncer: PgBouncer | undefined
  const cluster = new Cluster({
    apis: 2,
    workers: options.workers,
    env: options.env,
    databaseUrl: async (pg) => {
      bouncer = new PgBouncer({ upstreamPort: pg.port, poolSize: options.poolSize, maxClientConn: 500 })
      await bouncer.start()
      options.progress(`PgBouncer (transaction mode, default_pool_size ${options.poolSize}) on 127.0.0.1:${bouncer.port}`)
      return bouncer.url(DATABASE)
    },
  })
  let sql: postgres.Sql | undefined
  let queues: Queues | undefined
  try {
    await cluster.start(options.progress)
    sql = postgres(cluster.pg.url, { max: 2, onnotice: () => {} })
    const producer = redisConnection(cluster.redis.url, 'producer')
    producer.on('error', () => {})
    queues = new Queues(producer, cluster.queuePrefix)
    const business = JSON.parse(await cluster.cli(['business', 'create', '--name', 'Faults PgBouncer', '--json']))
    const key = JSON.parse(
      await cluster.cli(
        ['key', 'create', '--business', String(business.id), '--scopes', 'properties:read,properties:write,leads:read,leads:write,leads:ingest', '--json'],
        { secret: true },
      ),
    )
    const targets = cluster.apis.map((a) => ({ name: a.name, baseUrl: cluster.baseUrl(a) }))
    return await run({ cluster, bouncer: bouncer!, sql, queues, targets, apiKey: key.api_key })
  } finally {
    await queues?.close().catch(() => {})
    queues?.connection.disconnect()
    await sql?.end({ timeout: 2 }).catch(() => {})
    await cluster.stop()
    await bouncer?.stop().catch(() => {})
  }
}

/** Samples the pooler's server connections to PostgreSQL until stopped; the peak. */
function sampleServerConnections(bouncer: PgBouncer): { stop(): Promise<{ peak: number; samples: number }> } {
  let running = true
  let peak = 0
  let samples = 0
  const loop = (async () => {
    while (running) {
      const n = await bouncer.serverConnections(DATABASE).catch(() => -1)
      if (n >= 0) {
        peak = Math.max(peak, n)
        samples++
      }
      await pace(50) // the sampling interval
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return { peak, samples }
    },
  }
}

async function drainIngest(queues: Queues, timeoutMs: number): Promise<number> {
  const started = performance.now()
  await until(
    'the lead-ingest queue to drain',
    async () => {
      const c = await queues.get('lead-ingest').getJobCounts('waiting', 'active', 'delayed', 'prioritized')
      return c.waiting + c.active + c.delayed + c.prioritized === 0
    },
    timeoutMs,
    200,
  )
  return performance.now() - started
}

function checkAlive(cluster: Cluster, failures: string[]): void {
  for (const p of [...cluster.apis, ...cluster.workers] as ManagedProcess[]) {
    if (!p.alive) failures.push(`${p.name} exited with ${p.exitCode}: ${cluster.tail(p, 3)}`)
  }
}

export async function scenarioPgBouncerMixed(progress: (line: string) => void, rounds = 20): Promise<ScenarioResult> {
  const clients = 16
  const name =
    `i. mixed workload (create, publish, PATCH, reads, leads, ingest) from ${clients} ` +
    `clients over 2 APIs through PgBouncer (transaction mode, 5 server connections)`
  return withTopology({ poolSize: 5, workers: ['lead-ingest', 'lead-ingest,catalogue-reindex,webhook-delivery'], progress }, async (t) => {
    const failures: string[] = []
    const sampler = sampleServerConnections(t.bouncer)
    const started = performance.now()
    const result = await runMixedWorkload(
      async (client, method, path, body) => {
        const o = await request(t.targets, client, method, path, { key: t.apiKey, body })
        return { status: o.status, body: o.body, error: o.error }
      },
      { clients, rounds, tag: 'i', phoneBase: 0 },
    )
    const sendMs = performance.now() - started
    const drainMs = await drainIngest(t.queues, 60_000).catch((e) => {
      failures.push(String(e.message))
      return Number.NaN
    })
    const servers = await sampler.stop()
    const missing = await missingWrites(t.sql, result)
    const [{ doubled }] = await t.sql<{ doubled: number }[]>`
      select coalesce(sum(n - 1), 0)::int as doubled
      from (select count(*) as n from contacts where phone = any(${result.ingestPhones}::text[]) group by phone) c`
    const failed = failedAnswers(result)
    const writes = result.created.length + result.published.length + result.patched.size + result.leads.length + result.ingestPhones.length
    if (failed.length) failures.push(`answers other than 2xx: ${failed.join(', ')}`)
    if (missing.total) failures.push(`answered writes missing: ${JSON.stringify(missing)}`)
    if (doubled) failures.push(`${doubled} ingested leads doubled`)
    if (servers.peak > 5) failures.push(`${servers.peak} server connections, above the pool's 5`)
    checkAlive(t.cluster, failures)
    return {
      name,
      figures: {
        sent: result.answers.length,
        accepted: result.answers.filter((a) => is2xx(a.answer)).length,
        'answered writes': writes,
        persisted: writes - missing.total,
        duplicates: doubled,
        lost: missing.total,
        '5xx': result.answers.filter((a) => a.answer.status >= 500).length,
        'peak server connections': servers.peak,
      },
      timings: {
        'send time': `${s(sendMs)} (${Math.round(result.answers.length / (sendMs / 1000))} req/s)`,
        'queue drained after': s(drainMs),
        'time to recover': 'n/a (no fault injected: the pooler is the condition)',
      },
      notes: [`missing by kind: ${JSON.stringify(missing)}`, `server connections sampled ${servers.samples} times from SHOW SERVERS`],
      failures,
    }
  })
}

/** Catalogue list shapes of the catalogue benchmark (filters, geo, sort, search). */
const CATALOGUE_QUERIES = [
  'limit=20',
  'operation=venta&min_price=200000&max_price=400000',
  'city=Valencia&type=apartamento&min_bedrooms=2',
  `locations=${encodeURIComponent(JSON.stringify([{ geometry: { type: 'circle', center: { lat: 39.4699, lng: -0.3763 }, radius: 2000 } }]))}`,
  'sort=price_asc',
  'q=terraza',
]

export async function scenarioPgBouncerPoolBound(progress: (line: string) => void, ingests: number): Promise<ScenarioResult> {
  const name =
    `m. 2 API + 4 worker processes through one PgBouncer (default_pool_size ` + `20) under ingest (${ingests}) and catalogue load: server connections ≤ 20`
  const workers = ['lead-ingest,catalogue-reindex', 'lead-ingest,catalogue-reindex', 'lead-ingest,webhook-delivery', 'lead-ingest,catalogue-reindex']
  // 20 client connections per process whatever the default: many more clients than servers.
  return withTopology({ poolSize: 20, workers, env: { DB_POOL_SIZE: '20' }, progress }, async (t) => {
    const failures: string[] = []
    // A catalogue to read: published properties (catalogue-reindex keeps it).
    const seeded = await drive(100, 8, async (i) => {
      const created = await request(t.targets, i, 'POST', '/v1/properties', {
        key: t.apiKey,
        body: propertyBody({ title: `m ${i}`, pricing: { sale: 150_000 + i * 3000 } }),
      })
      return is2xx(created) ? request(t.targets, i, 'POST', `/v1/properties/${created.body.id}/publish`, { key: t.apiKey }) : created
    })
    const sampler = sampleServerConnections(t.bouncer)
    let clientPeak = 0
    let waitingPeak = 0
    let sampling = true
    const clientSampler = (async () => {
      while (sampling) {
        const pool = (await t.bouncer.show('pools').catch(() => [])).find((p) => p.database === DATABASE)
        if (pool) {
          clientPeak = Math.max(clientPeak, Number(pool.cl_active) + Number(pool.cl_waiting) + Number(pool.cl_idle ?? 0))
          waitingPeak = Math.max(waitingPeak, Number(pool.cl_waiting))
        }
        await pace(100) // the sampling interval
      }
    })()
    const started = performance.now()
    const phones = Array.from({ length: ingests }, (_, i) => `+34${610_000_000 + i}`)
    const [ingestOutcomes, catalogueOutcomes] = await Promise.all([
      drive(ingests, 64, (i) => request(t.targets, i, 'POST', '/v1/leads/ingest', { key: t.apiKey, body: ingestBody(phones[i], i, 'm') })),
      drive(Math.max(200, ingests / 4), 16, (i) =>
        request(t.targets, i, 'GET', `/v1/properties?${CATALOGUE_QUERIES[i % CATALOGUE_QUERIES.length]}`, { key: t.apiKey }),
      ),
    ])
    const sendMs = performance.now() - started
    const drainMs = await drainIngest(t.queues, 120_000).catch((e) => {
      failures.push(String(e.message))
      return Number.NaN
    })
    sampling = false
    await clientSampler
    const servers = await sampler.stop()
    const accepted = phones.filter((_, i) => is2xx(ingestOutcomes[i]))
    const rows = await t.sql<
      { phone: string; n: number }[]
    >`select phone, count(*)::int as n from contacts where phone = any(${accepted}::text[]) group by phone`
    const lost = accepted.length - rows.length
    const doubled = rows.reduce((sum, r) => sum + r.n - 1, 0)
    const [{ backends }] = await t.sql<
      { backends: number }[]
    >`select count(*)::int as backends from pg_stat_activity where datname = ${DATABASE} and backend_type = 'client backend'`
    const outcomes: Outcome[] = [...seeded, ...ingestOutcomes, ...catalogueOutcomes]
    const notOk = outcomes.filter((o) => !is2xx(o))
    if (notOk.length) failures.push(`${notOk.length} answers other than 2xx: ${summariseStatuses(notOk)}`)
    if (lost) failures.push(`${lost} accepted ingests have no lead`)
    if (doubled) failures.push(`${doubled} leads doubled`)
    if (servers.peak > 20) failures.push(`peak server connections ${servers.peak} > 20`)
    if (servers.samples === 0) failures.push('SHOW SERVERS was never read')
    checkAlive(t.cluster, failures)
    return {
      name,
      figures: {
        sent: outcomes.length,
        accepted: outcomes.filter(is2xx).length,
        persisted: rows.reduce((sum, r) => sum + r.n, 0),
        duplicates: doubled,
        lost,
        '5xx': outcomes.filter((o) => o.status >= 500).length,
        'peak server connections': servers.peak,
        'peak client connections': clientPeak,
        'peak clients waiting': waitingPeak,
        'backends at the end': backends,
      },
      timings: {
        'send time':
          `${s(sendMs)} (${Math.round((ingestOutcomes.length + catalogueOutcomes.length) / (sendMs / 1000))} ` +
          `req/s: ${ingestOutcomes.length} ingests, ${catalogueOutcomes.length} catalogue reads)`,
        'queue drained after': s(drainMs),
        'time to recover': 'n/a (no fault injected: the pool bound is the condition)',
      },
      notes: [
        `server connections sampled ${servers.samples} times from SHOW SERVERS, client connections from SHOW POOLS`,
        'backends at the end: PostgreSQL client backends of the database, the direct ones (LISTEN, the harness) included',
      ],
      failures,
    }
  })
}
