/**
 * `bun run test:faults [--ingests N] [--only a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,s] [--keep]`: the fault harness
 * (scenarios i to m and o start their own topologies: PgBouncer, a PostgreSQL standby, Redis Sentinel;
 * n: Redis down under publishable-key traffic; s: `bun run start`'s supervisor soaked under
 * mixed load with a child SIGKILLed at intervals, SOAK_MINUTES=10 for the long run).
 * Starts a private PostgreSQL and Redis, 2 API and 3 worker processes on loopback, runs the
 * scenarios, scans every process's output for secrets, prints one table per scenario with
 * PASS/FAIL, stops everything it started and exits non-zero on any failure.
 */
import postgres from 'postgres'
import { Queues, redisConnection } from '../../shared/platform/queues'
import { Cluster, until } from './cluster'
import { printResult, type ScenarioResult, type Target } from './load'
import { scenarioIdempotency, scenarioPostgresOutage, scenarioRedisOutage, scenarioSigterm, scenarioWorkerKill, type HarnessContext } from './scenarios'
import { scenarioPgBouncerMixed, scenarioPgBouncerPoolBound } from './pgbouncer'
import { scenarioEventsPostgresRestart, scenarioReceiverDown, scenarioWebhookWorkerKill } from './webhooks'
import { scenarioPrimaryFailover, scenarioPrimaryFailoverThroughPoolers, scenarioReadYourWrites } from './pgha'
import { scenarioSentinelFailover } from './sentinel'
import { scenarioRedisDownPublishable } from './forms'
import { scenarioSoak } from './soak'

const args = process.argv.slice(2)
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const ingests = Number(flag('ingests') ?? 10_000)
if (!Number.isInteger(ingests) || ingests < 100) {
  console.error('--ingests must be an integer ≥ 100')
  process.exit(2)
}
const only = new Set((flag('only') ?? 'a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,s').split(',').map((x) => x.trim()))
/** Scenario h's bound: a receiver failing this long gets its endpoint disabled (WEBHOOK_DISABLE_AFTER_MS). */
const WEBHOOK_DISABLE_AFTER_MS = 8000
const keep = args.includes('--keep')
const write = (line: string) => process.stdout.write(line + '\n')
const progress = (line: string) => write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${line}`)
const t0 = performance.now()

const cluster = new Cluster({
  apis: 2,
  // Different WORKER_QUEUES: two processes share lead-ingest (so one can die), the third takes
  // the media and outreach queues; catalogue-reindex and webhook-delivery (with the outbox
  // relay) have two consumers each, so scenario f can kill one.
  workers: [
    'lead-ingest',
    'lead-ingest,catalogue-reindex,webhook-delivery',
    'catalogue-reindex,upload-complete,image-watermark,outreach,webhook-delivery,lead-erasure',
  ],
  // Webhook receivers of the harness are on loopback; short bounds so retries, leases after a
  // kill and the disable bound of scenario h happen within the run.
  env: {
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_BACKOFF_BASE_MS: '200',
    WEBHOOK_DISABLE_AFTER_MS: String(WEBHOOK_DISABLE_AFTER_MS),
  },
})

let stopping = false
const stopAll = async () => {
  if (stopping) return
  stopping = true
  await cluster.stop(keep)
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    write(`\n${sig}: stopping everything the harness started`)
    void stopAll().finally(() => process.exit(130))
  })
}

const results: ScenarioResult[] = []
const secrets: { what: string; value: string }[] = []
let exitCode = 0
try {
  await cluster.start(progress)
  const sql = postgres(cluster.pg.url, { max: 4, onnotice: () => {} })
  const producer = redisConnection(cluster.redis.url, 'producer')
  producer.on('error', () => {})
  const queues = new Queues(producer, cluster.queuePrefix)
  const targets: Target[] = cluster.apis.map((a) => ({ name: a.name, baseUrl: cluster.baseUrl(a) }))

  const h: HarnessContext = {
    cluster,
    sql,
    queues,
    targets,
    ingests,
    progress,
    async newBusiness(tag) {
      const business = JSON.parse(await cluster.cli(['business', 'create', '--name', `Faults ${tag}`, '--json']))
      const key = JSON.parse(
        await cluster.cli(
          [
            'key',
            'create',
            '--business',
            String(business.id),
            '--scopes',
            'properties:read,properties:write,leads:read,leads:write,leads:ingest,webhooks:write',
            '--json',
          ],
          { secret: true },
        ),
      )
      secrets.push({ what: `API key secret of business ${tag}`, value: key.api_key.split('.')[1] })
      return { id: business.id, apiKey: key.api_key }
    },
  }

  const outreach = await setUpOutreach(h)
  const scenarios: [string, (h: HarnessContext) => Promise<ScenarioResult>][] = [
    ['a', scenarioWorkerKill],
    ['b', scenarioRedisOutage],
    ['c', scenarioPostgresOutage],
    ['d', scenarioSigterm],
    ['e', scenarioIdempotency],
    ['n', scenarioRedisDownPublishable],
    ['f', scenarioWebhookWorkerKill],
    ['g', scenarioEventsPostgresRestart],
    ['h', (h) => scenarioReceiverDown(h, WEBHOOK_DISABLE_AFTER_MS)],
    ['i', (h) => scenarioPgBouncerMixed(h.progress)],
    ['m', (h) => scenarioPgBouncerPoolBound(h.progress, Math.min(h.ingests, 4000))],
    ['j', scenarioPrimaryFailover],
    ['o', scenarioPrimaryFailoverThroughPoolers],
    ['k', scenarioReadYourWrites],
    // Its own topology (Redis with Sentinel), started and stopped by the scenario.
    ['l', (h) => scenarioSentinelFailover(h.progress, keep)],
    // Its own supervisor (main.ts) on the harness's stores.
    ['s', scenarioSoak],
  ]
  for (const [id, run] of scenarios) {
    if (!only.has(id)) continue
    progress(`scenario ${id}`)
    const logSizes = new Map(cluster.allLogs().map((l) => [l.file, l.text.length]))
    let r: ScenarioResult
    try {
      r = await run(h)
    } catch (error) {
      r = {
        name: `${id}. (crashed)`,
        figures: { sent: 0, accepted: 0, persisted: 0, duplicates: 0, lost: 0 },
        timings: {},
        notes: [],
        failures: [`the scenario threw: ${(error as Error).stack ?? error}`],
      }
    }
    // A failed scenario shows what the services logged as warnings or errors meanwhile, so a
    // rare failure can be understood from the CI output alone.
    if (r.failures.length) r.notes.push(...serviceWarnings(logSizes))
    results.push(r)
    printResult(r, write)
  }
  results.push(await outreach.check())
  printResult(results[results.length - 1], write)
  results.push(scanSecrets())
  printResult(results[results.length - 1], write)

  await queues.close().catch(() => {})
  producer.disconnect()
  await sql.end({ timeout: 2 })
} catch (error) {
  write(`harness error: ${(error as Error).stack ?? error}`)
  exitCode = 1
} finally {
  await stopAll()
}

write('')
write('== summary')
for (const r of results) write(`${r.failures.length ? 'FAIL' : 'PASS'}  ${r.name}`)
const failed = results.filter((r) => r.failures.length).length
write(
  `${results.length - failed} passed, ${failed} failed, in ${((performance.now() - t0) / 1000).toFixed(1)} s; every process the harness started was stopped`,
)
process.exit(exitCode || (failed ? 1 : 0))

/**
 * An outreach endpoint receiving signed deliveries during the run, so the signing secret is used
 * by the workers and then looked for in their output.
 */
async function setUpOutreach(h: HarnessContext) {
  const biz = await h.newBusiness('outreach')
  const received: string[] = []
  const receiver = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      received.push(await req.text())
      return new Response('ok')
    },
  })
  const set = JSON.parse(
    await cluster.cli(['outreach', 'set', '--business', String(biz.id), '--url', `http://127.0.0.1:${receiver.port}/hook`, '--json'], { secret: true }),
  )
  secrets.push({ what: 'outreach signing secret', value: set.secret })
  let sent = 0
  const refused: string[] = []
  for (let i = 0; i < 20; i++) {
    const r = await fetch(`${h.targets[i % 2].baseUrl}/v1/leads/inquiries`, {
      method: 'POST',
      headers: { 'x-api-key': biz.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ contact: { name: `Inquiry ${i}`, email: `inquiry${i}@example.com` }, message: 'Me interesa el piso' }),
    })
    if (r.status === 200) sent++
    else refused.push(`inquiry ${i} answered ${r.status}: ${(await r.text()).slice(0, 200)}`)
  }
  return {
    async check(): Promise<ScenarioResult> {
      const failures = [...refused]
      await until('the outreach deliveries', async () => received.length >= sent, 30_000).catch(() => {})
      if (received.length < sent) failures.push(`${sent - received.length} of ${sent} outreach deliveries did not arrive`)
      receiver.stop(true)
      return {
        name: 'outreach deliveries during the run (the signing secret in use)',
        figures: {
          sent: 20,
          accepted: sent,
          persisted: received.length,
          duplicates: Math.max(0, received.length - sent),
          lost: Math.max(0, sent - received.length),
        },
        timings: {},
        notes: [],
        failures,
      }
    },
  }
}

/** Warning and error lines the API and worker processes logged since `sizes` (at most 10). */
function serviceWarnings(sizes: Map<string, number>): string[] {
  const lines: string[] = []
  for (const { file, text } of cluster.allLogs()) {
    if (!/^(api|worker)-/.test(file)) continue
    for (const line of text.slice(sizes.get(file) ?? 0).split('\n')) {
      if (/"level":"(warn|error)"/.test(line)) lines.push(`${file}: ${line.slice(0, 400)}`)
    }
  }
  return lines.length > 10 ? [...lines.slice(0, 10), `… and ${lines.length - 10} more`] : lines
}

/** Key and outreach secrets must not appear in any process's output (or any CLI output but the one that shows them once). */
function scanSecrets(): ScenarioResult {
  const logs = cluster.allLogs()
  const failures: string[] = []
  let bytes = 0
  for (const { file, text } of logs) {
    bytes += text.length
    for (const s of secrets) if (text.includes(s.value)) failures.push(`${s.what} appears in ${file}`)
  }
  return {
    name: 'secrets: key and outreach secrets in the output of every process of the run',
    figures: {
      sent: secrets.length,
      accepted: secrets.length,
      persisted: 0,
      duplicates: 0,
      lost: 0,
      'log files': logs.length,
      'bytes scanned': bytes,
      leaks: failures.length,
    },
    timings: {},
    notes: [
      `${secrets.length} secrets searched in ${logs.length} log files (${logs
        .map((l) => l.file.replace(/\.\d+\.log$/, ''))
        .filter((v, i, a) => a.indexOf(v) === i)
        .join(', ')})`,
    ],
    failures,
  }
}
