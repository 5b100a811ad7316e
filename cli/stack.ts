/**
 * `bun run start:stack`: compose's topology without Docker, for a developer machine and CI. The
 * app services of compose.yaml (those built from this repository and in no profile) are read from
 * the file itself, so the two cannot drift: its one-shot migrate runs first, then the API and each
 * worker group as its own process with that group's WORKER_QUEUES. S3 is an s3rver in this process
 * with the two buckets; PostgreSQL and Redis are the configured ones (DATABASE_URL, REDIS_URL).
 * Presigned URLs are signed for `localhost` while the service talks to `127.0.0.1`, as compose's
 * are signed for the host while the service talks to `minio`. SIGINT or SIGTERM stops everything.
 */
import { mkdir } from 'node:fs/promises'
import { hostname } from 'node:os'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { Subprocess } from 'bun'
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver'
import { ConfigError, environmentWith, getConfig, type Config } from '../shared/platform/config'
import { QUEUE_NAMES, type QueueName } from '../shared/platform/queue-names'
import { Queues, redisConnection } from '../shared/platform/queues'
import { redactUrl } from '../shared/platform/service-errors'

const ROOT = resolve(import.meta.dir, '..')
const USAGE = `usage: bun run start:stack [--s3-port <port>] [--s3-dir <directory>]
  --s3-port   where s3rver listens (default 9000, compose's MinIO port; 0 picks a free one)
  --s3-dir    s3rver's files (default .data/s3rver)
PORT, DATABASE_URL, REDIS_URL, QUEUE_PREFIX and the rest are read as by \`bun run start\`.`
/** How long the API and workers may take to become ready (migrations ran before). */
const READY_TIMEOUT_MS = 60_000

interface ComposeService {
  build?: unknown
  profiles?: string[]
  restart?: string
  command?: string[]
  environment?: Record<string, string>
}

export interface StackService {
  name: string
  command: string[]
  oneShot: boolean
  queues: QueueName[]
}

/** compose.yaml's app services, in file order: what each runs, whether it is one-shot, its queues. */
export async function composeTopology(path = resolve(ROOT, 'compose.yaml')): Promise<StackService[]> {
  const { services } = Bun.YAML.parse(await Bun.file(path).text()) as { services: Record<string, ComposeService> }
  return Object.entries(services)
    .filter(([, s]) => s.build !== undefined && !s.profiles?.length)
    .map(([name, s]) => {
      if (!Array.isArray(s.command)) throw new Error(`compose.yaml: service ${name} has no command list`)
      const raw = s.environment?.WORKER_QUEUES
      const queues = s.command.includes('start:worker') ? (!raw || raw === 'all' ? [...QUEUE_NAMES] : raw.split(',').map((q) => q.trim())) : []
      for (const q of queues)
        if (!(QUEUE_NAMES as readonly string[]).includes(q)) throw new Error(`compose.yaml: service ${name} names an unknown queue "${q}"`)
      return { name, command: s.command, oneShot: s.restart === 'no', queues: queues as QueueName[] }
    })
}

function say(line: string): void {
  console.log(`stack: ${line}`)
}

async function startS3(config: Config, port: number, directory: string) {
  await mkdir(directory, { recursive: true })
  const { privateBucket, publicBucket } = config.s3
  const server = new S3rver({ port, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: privateBucket }, { name: publicBucket }] })
  const address = (await server.run()) as { port: number }
  const endpoint = `http://127.0.0.1:${address.port}`
  const publicEndpoint = `http://localhost:${address.port}`
  return {
    close: () => server.close() as Promise<void>,
    publicEndpoint,
    env: {
      STORAGE_DRIVER: 's3',
      S3_ENDPOINT: endpoint,
      S3_PUBLIC_ENDPOINT: publicEndpoint,
      S3_REGION: config.s3.region,
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_PRIVATE_BUCKET: privateBucket,
      S3_PUBLIC_BUCKET: publicBucket,
      S3_FORCE_PATH_STYLE: 'true',
      CDN_URL: `${publicEndpoint}/${publicBucket}`,
    },
  }
}

/** Polls until `check` holds; false when the deadline passes or `abandon` says to stop. */
async function until(check: () => Promise<boolean>, deadline: number, abandon: () => boolean): Promise<boolean> {
  while (Date.now() < deadline && !abandon()) {
    if (await check().catch(() => false)) return true
    await Bun.sleep(200)
  }
  return false
}

/** Every queue of every worker group has a worker of this host connected to Redis (BullMQ names the connections). */
async function workersConnected(config: Config, groups: StackService[], deadline: number, abandon: () => boolean): Promise<boolean> {
  const connection = redisConnection(config.redisUrl, 'producer')
  connection.on('error', () => {})
  const queues = new Queues(connection, config.queuePrefix)
  const marker = `:w:${hostname()}:`
  try {
    return await until(
      async () => {
        for (const name of groups.flatMap((g) => g.queues)) {
          if (!(await queues.get(name).getWorkers()).some((w) => String(w.rawname).includes(marker))) return false
        }
        return true
      },
      deadline,
      abandon,
    )
  } finally {
    await queues.close().catch(() => {})
    connection.disconnect()
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { 's3-port': { type: 'string' }, 's3-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: false,
  })
  if (values.help) {
    console.log(USAGE)
    return 0
  }
  const s3Port = Number(values['s3-port'] ?? 9000)
  if (!Number.isInteger(s3Port) || s3Port < 0 || s3Port > 65535) throw new ConfigError(`--s3-port must be a port number, got "${values['s3-port']}"`)
  const config = getConfig()
  const topology = await composeTopology()
  const s3 = await startS3(config, s3Port, resolve(ROOT, values['s3-dir'] ?? '.data/s3rver'))
  say(`s3 (s3rver) ${s3.publicEndpoint}: buckets ${config.s3.privateBucket} (originals), ${config.s3.publicBucket} (public, CDN_URL ${s3.env.CDN_URL})`)
  say(`PostgreSQL ${redactUrl(config.databaseUrl)}, Redis ${redactUrl(config.redisUrl)}, queue prefix ${config.queuePrefix}`)

  const stack = new Stack(config, s3)
  process.on('SIGINT', () => void stack.stop())
  process.on('SIGTERM', () => void stack.stop())
  await stack.runOneShots(topology.filter((s) => s.oneShot))
  if (!stack.stopping) await stack.startServices(topology.filter((s) => !s.oneShot))
  await stack.stopped
  say('stopped')
  return stack.failed ? 1 : 0
}

/** The stack's processes: one-shots run in turn, then the services; any service's exit or a signal stops them all. */
class Stack {
  stopping = false
  failed = false
  private readonly running = new Map<string, Subprocess>()
  private readonly done = Promise.withResolvers<void>()
  /** Resolves once every process has exited and s3rver is closed. */
  readonly stopped = this.done.promise

  constructor(
    private readonly config: Config,
    private readonly s3: Awaited<ReturnType<typeof startS3>>,
  ) {}

  /** Each one-shot (migrate) in compose order; one that fails stops the stack. */
  async runOneShots(services: StackService[]): Promise<void> {
    for (const service of services) {
      say(`${service.name}: ${service.command.join(' ')}`)
      const code = await this.spawn(service).exited
      if (code !== 0 && !this.stopping) {
        say(`${service.name} failed with code ${code}`)
        this.failed = true
        await this.stop()
      }
    }
  }

  /** Starts the API and every worker group, then waits (bounded) for the API's /readyz and each group's Redis connection. */
  async startServices(services: StackService[]): Promise<void> {
    const { port } = this.config
    const deadline = Date.now() + READY_TIMEOUT_MS
    for (const service of services) {
      const child = this.spawn(service)
      const role = service.queues.length ? `queues ${service.queues.join(',')}` : `http://127.0.0.1:${port}`
      say(`${service.name} (pid ${child.pid}): ${role}`)
    }
    const abandon = () => this.stopping
    const apiReady = await until(() => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok), deadline, abandon)
    const workersReady =
      apiReady &&
      (await workersConnected(
        this.config,
        services.filter((s) => s.queues.length),
        deadline,
        abandon,
      ))
    if (apiReady && workersReady) say(`ready: API http://127.0.0.1:${port}, ${services.length} processes; Ctrl-C stops them all`)
    else if (!this.stopping) {
      say(`not ready within ${READY_TIMEOUT_MS / 1000} s (${apiReady ? 'a worker group is not connected to Redis' : 'the API does not answer /readyz'})`)
      this.failed = true
      void this.stop()
    }
  }

  /** SIGTERM to every process, SIGKILL to those still running past their drain bound; then s3rver closes. */
  async stop(): Promise<void> {
    if (this.stopping) return
    this.stopping = true
    say('stopping')
    for (const child of this.running.values()) child.kill('SIGTERM')
    // Each process drains within SHUTDOWN_TIMEOUT_MS and ends itself 5 s later at most.
    const hardStop = setTimeout(() => {
      for (const child of this.running.values()) child.kill('SIGKILL')
    }, this.config.shutdownTimeoutMs + 10_000)
    await Promise.all([...this.running.values()].map((c) => c.exited))
    clearTimeout(hardStop)
    await this.s3.close().catch(() => {})
    this.done.resolve()
  }

  private spawn(service: StackService): Subprocess {
    const child = Bun.spawn(service.command, {
      cwd: ROOT,
      env: environmentWith({ ...this.s3.env, ...(service.queues.length ? { WORKER_QUEUES: service.queues.join(',') } : {}) }),
      stdin: 'ignore',
      stdout: 'inherit',
      stderr: 'inherit',
    })
    this.running.set(service.name, child)
    void child.exited.then((code) => {
      this.running.delete(service.name)
      if (!this.stopping && !service.oneShot) {
        say(`${service.name} exited with code ${code}: stopping the stack`)
        this.failed = true
        void this.stop()
      }
    })
    return child
  }
}

if (import.meta.main) {
  try {
    process.exit(await main())
  } catch (error) {
    const e = error as Error & { code?: string }
    const usage = e.code?.startsWith('ERR_PARSE_ARGS') === true
    console.error(usage ? `${e.message}\n${USAGE}` : e.name === 'ConfigError' ? e.message : `start:stack failed: ${e.message}`)
    process.exit(usage ? 2 : 1)
  }
}
