/**
 * The API process survives data-tier faults (contract §14): each one ends as a 503
 * problem+json for the request in flight, and the process serves again once the fault is gone.
 * Before, postgres.js's array-type look-up on a new connection rejected unhandled (a role's
 * `statement_timeout`, or its backend terminated meanwhile: ECONNRESET) and the crash handler
 * drained and exited the process. A private PostgreSQL cluster with its own `app` role takes the
 * faults; the shared instance and its roles are never touched.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { createDatabase } from '../../db/client'
import { migrateDatabase } from '../../db/migrate'
import { insertKey } from '../../db/queries/api-keys'
import { createBusiness } from '../../db/queries/businesses'
import { generateApiKey } from '../../shared/access/api-key-format'
import { SCOPES } from '../../shared/access/scopes'
import { ManagedProcess, PgCluster } from '../faults/cluster'
import { eventually } from '../helpers/context'
import { freePort } from '../helpers/processes'

let root: string
let cluster: PgCluster
let admin: postgres.Sql
let api: ManagedProcess
let baseUrl: string
let apiKey: string

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'data-tier-faults-'))
  // The cluster runs as the postgres user (PgCluster): it must reach its directory inside this one.
  chmodSync(root, 0o755)
  cluster = new PgCluster(root)
  await cluster.init()
  await cluster.start()
  await migrateDatabase(cluster.url)
  admin = postgres(cluster.url, { max: 1, onnotice: () => {} })
  // The API's own role, so a role setting reaches only its connections.
  await admin.unsafe('create role app login superuser')
  const seeding = createDatabase(cluster.url, { max: 1 })
  const business = await createBusiness(seeding.db, 'Data-tier faults')
  const key = generateApiKey()
  await insertKey(seeding.db, { businessId: business.id, keyId: key.keyId, secretHash: key.secretHash, name: 'faults', scopes: [...SCOPES], expiresAt: null })
  await seeding.close()
  apiKey = key.apiKey

  const port = await freePort()
  baseUrl = `http://127.0.0.1:${port}`
  const logDir = join(root, 'logs')
  mkdirSync(logDir)
  const url = new URL(cluster.url)
  url.username = 'app'
  api = new ManagedProcess(
    'api',
    ['bun', 'run', 'api/index.ts'],
    {
      DATABASE_URL: url.toString(),
      DB_POOL_SIZE: '4',
      PORT: String(port),
      PUBLIC_URL: baseUrl,
      QUEUE_PREFIX: `test-${crypto.randomUUID().slice(0, 8)}`,
      DATA_DIR: join(root, 'data'),
      LOG_LEVEL: 'warn',
    },
    logDir,
  )
  api.start()
  await eventually(
    async () => {
      if (!api.alive) throw new Error(`the API exited with ${api.exitCode}`)
      return (
        (await fetch(`${baseUrl}/readyz`).then(
          (r) => r.status,
          () => 0,
        )) === 200
      )
    },
    { timeoutMs: 30_000, what: 'the API to be ready' },
  )
}, 120_000)

afterAll(async () => {
  await api?.stop(10_000)
  await admin?.end({ timeout: 2 }).catch(() => {})
  await cluster?.stop().catch(() => {})
  rmSync(root, { recursive: true, force: true })
})

const terminateApiBackends = () => admin`select pg_terminate_backend(pid) from pg_stat_activity where usename = 'app' and pid <> pg_backend_pid()`
const apiBackends = async () => (await admin<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where usename = 'app'`)[0].n

/** GET a list that reads PostgreSQL; the status, and whether a 503 came as problem+json. */
async function list(): Promise<{ status: number; problem: boolean }> {
  const res = await fetch(`${baseUrl}/v1/properties?limit=5`, { headers: { 'x-api-key': apiKey }, signal: AbortSignal.timeout(15_000) }).catch(
    (error) => error as Error,
  )
  if (res instanceof Error) return { status: 0, problem: false }
  await res.arrayBuffer()
  return { status: res.status, problem: res.headers.get('content-type')?.startsWith('application/problem+json') ?? false }
}

/** `count` list calls, `concurrency` at a time, tallied by status (a non-problem 503 counts apart). */
async function load(count: number, concurrency: number, between?: () => Promise<unknown>): Promise<Map<string, number>> {
  const tally = new Map<string, number>()
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) {
        const r = await list()
        const key = r.status === 503 && !r.problem ? '503 (not problem+json)' : String(r.status)
        tally.set(key, (tally.get(key) ?? 0) + 1)
        if (between) await between()
      }
    }),
  )
  return tally
}

/** Answers other than 200 or a 503 problem+json (a 500, a hang, a refused connection). */
const unexpected = (tally: Map<string, number>) => [...tally].filter(([status]) => status !== '200' && status !== '503')

/** The API's warnings and errors (LOG_LEVEL=warn), last ones first, for a failure message. */
const apiLog = () =>
  readFileSync(api.logs[api.logs.length - 1], 'utf8')
    .trim()
    .split('\n')
    .slice(-10)
    .reverse()
    .join('\n')

const serves = () => eventually(async () => (await list()).status === 200, { timeoutMs: 20_000, what: 'the API to answer 200 again' })

describe('the API process survives data-tier faults', () => {
  test('a role statement_timeout that fails the type look-up of every new connection: 503s, no exit', async () => {
    await admin.unsafe(`alter role app set statement_timeout = '1ms'`)
    try {
      // Connections made from now on start with the setting.
      await terminateApiBackends()
      const tally = await load(60, 4, terminateApiBackends)
      expect(unexpected(tally), apiLog()).toEqual([])
      expect(tally.get('503') ?? 0).toBeGreaterThan(0)
      expect(api.alive).toBe(true)
    } finally {
      await admin.unsafe('alter role app reset statement_timeout')
      await terminateApiBackends()
    }
    await serves()
    expect(api.alive).toBe(true)
  }, 60_000)

  test('backends terminated again and again under load: 503s, no exit, then 200s', async () => {
    let stop = false
    const killer = (async () => {
      let rounds = 0
      while (!stop) {
        await terminateApiBackends()
        rounds++
        // The next round comes once the API has connected again, so each one cuts connections it uses.
        await eventually(async () => stop || (await apiBackends()) > 0, { timeoutMs: 60_000, intervalMs: 5, what: 'the API to connect again' })
      }
      return rounds
    })()
    const tally = await load(400, 8).finally(() => (stop = true))
    const rounds = await killer
    expect(rounds).toBeGreaterThan(0)
    // How many answer 200 meanwhile depends on the machine (every one may be a 503); what
    // matters is that none is anything else, and that the process serves once it stops.
    expect(unexpected(tally), apiLog()).toEqual([])
    expect(api.alive, apiLog()).toBe(true)
    await serves()
    expect(api.alive).toBe(true)
  }, 90_000)
})
