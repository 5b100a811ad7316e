/**
 * Scenario l (contract §14): kill -9 of the Redis master under ingest load, with Redis
 * run as operators run it for failover — a master, two replicas and three sentinels (quorum 2) —
 * and the service configured with REDIS_SENTINELS. Its own topology on free ports: a private
 * PostgreSQL, the Redis nodes, 2 API and 2 lead-ingest worker processes; all stopped afterwards.
 *
 * Two replicas, not one: after the promotion the other replica follows the new master, so an
 * ingest can again be acknowledged by a replica and the Redis path itself recovers. With a single
 * replica nothing is left to acknowledge (WAIT), and every batch then goes to PostgreSQL until
 * the lost node returns — still answered and never lost, but not the recovery this measures.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { loadConfig } from '../../shared/platform/config'
import { Queues, redisConnection } from '../../shared/platform/queues'
import { SentinelTopology } from '../helpers/redis-sentinel'
import { Cluster, until } from './cluster'
import { driveFor, ingestBody, pace, request, summariseStatuses, type Outcome, type ScenarioResult } from './load'

/** Ingest recovers within this of Sentinel's promotion (contract §14). */
const RECOVERY_BOUND_MS = 10_000
/** Load runs this long before the kill, and this long after the promotion. */
const LOAD_BEFORE_KILL_MS = 3000
const LOAD_AFTER_PROMOTION_MS = 12_000

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`

/**
 * The harness's Cluster with Redis replaced by the Sentinel topology: the service processes get
 * REDIS_SENTINELS instead of the base class's single redis-server, which stays idle.
 */
class SentinelCluster extends Cluster {
  topology!: SentinelTopology

  override get env(): Record<string, string> {
    return { ...super.env, ...this.topology.env }
  }

  override async start(progress: (line: string) => void): Promise<void> {
    // The base class's directory is the postgres user's; the Redis nodes run as this user.
    const redisDir = mkdtempSync(join(tmpdir(), 'plm-faults-sentinel-'))
    chmodSync(redisDir, 0o755)
    this.topology = await SentinelTopology.start(redisDir, { replicas: 2 })
    progress(
      `Redis master :${this.topology.master.port}, replicas ${this.topology.replicas.map((r) => `:${r.port}`).join(' ')}, ` +
        `sentinels ${this.topology.sentinels.map((r) => `:${r.port}`).join(' ')} (${redisDir})`,
    )
    await super.start(progress)
  }

  override async stop(keep = false): Promise<void> {
    await super.stop(keep)
    await this.topology?.stop()
    if (!keep && this.topology) rmSync(this.topology.dir, { recursive: true, force: true })
  }
}

export async function scenarioSentinelFailover(progress: (line: string) => void, keep = false): Promise<ScenarioResult> {
  const name = 'l. kill -9 of the Redis master under ingest load; Sentinel promotes a replica'
  const failures: string[] = []
  const notes: string[] = []
  const cluster = new SentinelCluster({ apis: 2, workers: ['lead-ingest', 'lead-ingest'], env: { REDIS_WAIT_TIMEOUT_MS: '500' } })
  let sql: postgres.Sql | undefined
  let queues: Queues | undefined
  try {
    await cluster.start(progress)
    const topology = cluster.topology
    sql = postgres(cluster.pg.url, { max: 2, onnotice: () => {} })
    queues = new Queues(redisConnection(loadConfig({ ...process.env, ...cluster.env }), 'worker'), cluster.queuePrefix)
    queues.connection.on('error', () => {})
    const business = JSON.parse(await cluster.cli(['business', 'create', '--name', 'Faults l', '--json']))
    const key = JSON.parse(await cluster.cli(['key', 'create', '--business', String(business.id), '--scopes', 'leads:ingest', '--json'], { secret: true }))
    const targets = cluster.apis.map((a) => ({ name: a.name, baseUrl: cluster.baseUrl(a) }))
    const pids = new Map([...cluster.apis, ...cluster.workers].map((p) => [p, p.pid]))

    // Every request has its own phone: every 200 must become exactly one lead.
    const phones: string[] = []
    const sentAt: number[] = []
    const call = (i: number): Promise<Outcome> => {
      phones[i] = `+34${610_000_000 + i}`
      sentAt[i] = Date.now()
      return request(targets, i, 'POST', '/v1/leads/ingest', { key: key.api_key, body: ingestBody(phones[i], i, 'l') })
    }

    const t0 = Date.now()
    let killedAt = 0
    let promotedAt = 0
    let readyAgainAt = 0
    const control = (async () => {
      await pace(LOAD_BEFORE_KILL_MS)
      await topology.untilReplicasOnline()
      const oldMaster = topology.master.port
      killedAt = Date.now()
      await topology.kill(topology.master)
      progress(`l: kill -9 redis master :${oldMaster}`)
      await until(
        'the sentinels to promote a replica',
        async () => {
          const port = await topology.currentMasterPort()
          return port !== undefined && port !== oldMaster
        },
        30_000,
        50,
      )
      promotedAt = Date.now()
      progress(`l: promoted :${await topology.currentMasterPort()} after ${s(promotedAt - killedAt)}`)
      await until(
        '/readyz 200 on every API',
        async () => {
          const statuses = await Promise.all(
            targets.map((t) =>
              fetch(`${t.baseUrl}/readyz`).then(
                (r) => r.status,
                () => 0,
              ),
            ),
          )
          return statuses.every((x) => x === 200)
        },
        60_000,
        50,
      )
      readyAgainAt = Date.now()
      progress(`l: /readyz 200 on every API ${s(readyAgainAt - promotedAt)} after the promotion`)
    })()
    const outcomes = await driveFor(() => promotedAt > 0 && Date.now() - promotedAt > LOAD_AFTER_PROMOTION_MS, 400, 200, call)
    await control

    await until(
      'the lead-ingest queue to drain',
      async () => {
        const c = await queues!.get('lead-ingest').getJobCounts('waiting', 'active', 'delayed', 'prioritized')
        return c.waiting + c.active + c.delayed + c.prioritized === 0
      },
      60_000,
      200,
    )

    const accepted = new Set(outcomes.flatMap((o, i) => (o.status === 200 ? [phones[i]] : [])))
    const rows = await sql<{ phone: string; n: number }[]>`select phone, count(*)::int as n from contacts where business_id = ${business.id} group by phone`
    const stored = new Map(rows.map((r) => [r.phone, r.n]))
    const lost = [...accepted].filter((p) => !stored.has(p))
    const doubled = rows.filter((r) => r.n > 1).length
    const sentPhones = new Set(phones)
    const unexpected = rows.filter((r) => !sentPhones.has(r.phone)).length
    const fiveXx = outcomes.filter((o) => o.status >= 500)
    const notOk = outcomes.map((o, i) => ({ o, at: sentAt[i] })).filter(({ o }) => o.status !== 200)
    const lateNotOk = notOk.filter(({ at }) => at > promotedAt + RECOVERY_BOUND_MS)
    // Batches the APIs stored in PostgreSQL because Redis did not take them or no replica
    // acknowledged them: the last one marks when the Redis path was whole again.
    const fallbackTimes = cluster
      .allLogs()
      .filter((l) => l.file.startsWith('api-'))
      .flatMap((l) =>
        l.text
          .split('\n')
          .filter((line) => line.includes('storing the batch directly'))
          .map((line) => Date.parse(JSON.parse(line).time)),
      )
    const lastFallback = Math.max(0, ...fallbackTimes)
    const redisBackAfter = lastFallback > promotedAt ? lastFallback - promotedAt : 0

    if (lost.length) failures.push(`${lost.length} ingests answered 200 have no lead, e.g. ${lost.slice(0, 3).join(', ')}`)
    if (doubled) failures.push(`${doubled} phones have more than one lead`)
    if (unexpected) failures.push(`${unexpected} leads with phones never sent`)
    if (lateNotOk.length)
      failures.push(
        `${lateNotOk.length} ingests sent more than ${s(RECOVERY_BOUND_MS)} after the ` +
          `promotion were not answered 200: ${summariseStatuses(lateNotOk.map((x) => x.o))}`,
      )
    const wrong = notOk.filter(({ o }) => !(o.status === 503 && String(o.contentType).startsWith('application/problem+json')))
    if (wrong.length) failures.push(`${wrong.length} failed ingests were not a problem+json 503: ${summariseStatuses(wrong.map((x) => x.o))}`)
    if (readyAgainAt - promotedAt > RECOVERY_BOUND_MS) failures.push(`/readyz was 200 on every API only ${s(readyAgainAt - promotedAt)} after the promotion`)
    if (redisBackAfter > RECOVERY_BOUND_MS) failures.push(`the APIs still stored batches directly ${s(redisBackAfter)} after the promotion`)
    for (const [p, pid] of pids) {
      if (!p.alive) failures.push(`${p.name} (pid ${pid}) exited with ${p.exitCode}: ${cluster.tail(p, 3)}`)
      else if (p.pid !== pid) failures.push(`${p.name} was restarted`)
    }
    const secret = key.api_key.split('.')[1]
    const leaks = cluster
      .allLogs()
      .filter((l) => l.text.includes(secret))
      .map((l) => l.file)
    if (leaks.length) failures.push(`the API key secret appears in ${leaks.join(', ')}`)
    notes.push(`statuses: ${summariseStatuses(outcomes)}; ${outcomes.filter((o) => o.retried).length} retried on the other API`)
    notes.push(
      `${fallbackTimes.length} batches stored directly in PostgreSQL by the APIs (Redis unreachable, or no replica acknowledged within REDIS_WAIT_TIMEOUT_MS)`,
    )
    const logTail = (file: string) =>
      readFileSync(join(topology.dir, file), 'utf8')
        .split('\n')
        .filter((l) => /\+(sdown|odown|switch-master|promoted-slave|slave-reconf-done)/.test(l))
        .map((l) => l.replace(/^\d+:X /, ''))
        .slice(0, 6)
    notes.push(`sentinel 1: ${logTail('redis-sentinel-1.log').join(' | ')}`)
    return {
      name,
      figures: {
        sent: outcomes.length,
        accepted: accepted.size,
        persisted: rows.reduce((n, r) => n + r.n, 0),
        duplicates: doubled,
        lost: lost.length,
        '5xx': fiveXx.length,
        'not 200': notOk.length,
      },
      timings: {
        load: `${s(Date.now() - t0)} at up to 400 req/s over 2 APIs`,
        'kill → promotion': s(promotedAt - killedAt),
        'promotion → /readyz 200 (all APIs)': s(readyAgainAt - promotedAt),
        'promotion → last direct store (Redis path whole)': s(redisBackAfter),
        'last non-200 after the promotion': notOk.length ? s(Math.max(0, Math.max(...notOk.map((x) => x.at)) - promotedAt)) : 'none',
      },
      notes,
      failures,
    }
  } catch (error) {
    failures.push(`the scenario threw: ${(error as Error).stack ?? error}`)
    return { name, figures: { sent: 0, accepted: 0, persisted: 0, duplicates: 0, lost: 0 }, timings: {}, notes, failures }
  } finally {
    await queues?.close().catch(() => {})
    queues?.connection.disconnect()
    await sql?.end({ timeout: 2 }).catch(() => {})
    await cluster.stop(keep)
  }
}
