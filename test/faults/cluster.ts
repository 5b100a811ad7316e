/**
 * The fault harness's own world on loopback: a private PostgreSQL cluster (initdb + pg_ctl in a
 * temp dir, run as the postgres user), a private redis-server with AOF fsynced on every write
 * (how operators run it), and the service as separate processes — API replicas and worker
 * replicas with their own WORKER_QUEUES. Everything started here is stopped here, by PID (or by
 * pg_ctl for the cluster it created); the shared 5432/6379 services are never touched.
 */
import { mkdtempSync, chownSync, mkdirSync, rmSync, openSync, closeSync, readFileSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { freePort, ROOT } from '../helpers/processes'

const PG_BIN = '/usr/lib/postgresql/15/bin'

export async function until<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs: number, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const v = await check()
      if (v) return v
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (${(last as Error).message ?? last})` : ''}`)
    await Bun.sleep(intervalMs)
  }
}

export async function exec(cmd: string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<string> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...options.env }, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  const timer = setTimeout(() => proc.kill('SIGKILL'), options.timeoutMs ?? 60_000)
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  clearTimeout(timer)
  if (code !== 0) throw new Error(`${cmd.join(' ')} exited ${code}: ${(err || out).trim().slice(0, 500)}`)
  return out
}

/** A PostgreSQL 15 cluster of our own, with PostGIS available. */
export class PgCluster {
  readonly dir: string
  port = 0
  running = false

  constructor(root: string) {
    this.dir = join(root, 'pg')
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/property_lead_faults`
  }

  /** initdb refuses to run as root: as root the cluster belongs to the postgres user. */
  private asPostgres(args: string[]): string[] {
    return process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...args] : args
  }

  async init(): Promise<void> {
    mkdirSync(this.dir, { recursive: true })
    if (process.getuid?.() === 0) chownSync(this.dir, uid('postgres'), gid('postgres'))
    await exec(this.asPostgres([`${PG_BIN}/initdb`, '-D', this.dir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']))
    this.port = await freePort()
  }

  async start(): Promise<void> {
    // fsync off: the harness tests the service's behaviour around a stopped database, not the
    // disk's; a clean stop (pg_ctl -m fast) writes everything anyway. Enough connections for
    // 2 API pools and 3 worker pools.
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300 -c shared_buffers=64MB`
    await exec(this.asPostgres([`${PG_BIN}/pg_ctl`, '-D', this.dir, '-l', join(this.dir, 'server.log'), '-o', opts, '-w', '-t', '30', 'start']))
    this.running = true
  }

  /** `pg_ctl stop -m fast`: what an operator (or a failover) does; open sessions are cut. */
  async stop(): Promise<void> {
    if (!this.running) return
    await exec(this.asPostgres([`${PG_BIN}/pg_ctl`, '-D', this.dir, '-m', 'fast', '-w', '-t', '30', 'stop']))
    this.running = false
  }

  async createDatabase(): Promise<void> {
    const sql = postgres(`postgres://postgres@127.0.0.1:${this.port}/postgres`, { max: 1, onnotice: () => {} })
    try {
      await sql.unsafe('create database property_lead_faults')
    } finally {
      await sql.end({ timeout: 2 })
    }
  }
}

export function uid(user: string): number {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${user}:`))
  if (!line) throw new Error(`no ${user} user: PostgreSQL is not installed`)
  return Number(line.split(':')[2])
}
export function gid(user: string): number {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${user}:`))!
  return Number(line.split(':')[3])
}

/** A child process of the harness whose output goes to its own log file (for the secrets scan). */
export class ManagedProcess {
  proc: ReturnType<typeof Bun.spawn> | undefined
  incarnation = 0
  exitCode: number | null = null
  exitedAt: number | undefined
  readonly logs: string[] = []

  constructor(
    readonly name: string,
    private cmd: string[],
    private env: Record<string, string>,
    private logDir: string,
  ) {}

  get pid(): number | undefined {
    return this.proc?.pid
  }

  get alive(): boolean {
    return this.proc !== undefined && this.exitCode === null
  }

  start(): void {
    this.incarnation++
    const log = join(this.logDir, `${this.name}.${this.incarnation}.log`)
    this.logs.push(log)
    const fd = openSync(log, 'a')
    this.exitCode = null
    this.exitedAt = undefined
    const proc = Bun.spawn(this.cmd, { cwd: ROOT, env: { ...process.env, ...this.env }, stdout: fd, stderr: fd, stdin: 'ignore' })
    closeSync(fd)
    this.proc = proc
    void proc.exited.then((code) => {
      if (this.proc === proc) {
        this.exitCode = code
        this.exitedAt = Date.now()
      }
    })
  }

  signal(sig: 'SIGTERM' | 'SIGKILL' | 'SIGINT'): void {
    if (this.pid !== undefined && this.alive) process.kill(this.pid, sig)
  }

  async waitExit(timeoutMs: number): Promise<number | null> {
    if (!this.proc) return null
    const proc = this.proc
    let timer: ReturnType<typeof setTimeout> | undefined
    const code = await Promise.race([proc.exited, new Promise<null>((r) => (timer = setTimeout(() => r(null), timeoutMs)))])
    clearTimeout(timer)
    return code
  }

  /** SIGTERM, then SIGKILL past the bound. */
  async stop(timeoutMs = 15_000): Promise<void> {
    if (!this.alive) return
    this.signal('SIGTERM')
    if ((await this.waitExit(timeoutMs)) === null) {
      this.signal('SIGKILL')
      await this.waitExit(5000)
    }
  }
}

/** redis-server of our own: AOF fsynced on every write, noeviction (architecture.md "Queues"). */
export class RedisServer extends ManagedProcess {
  constructor(
    readonly port: number,
    dir: string,
    logDir: string,
  ) {
    mkdirSync(dir, { recursive: true })
    super(
      'redis',
      [
        'redis-server',
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
        '--maxmemory-policy',
        'noeviction',
        '--protected-mode',
        'no',
      ],
      {},
      logDir,
    )
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  async ready(timeoutMs = 10_000): Promise<void> {
    await until(
      'redis-server to answer',
      async () => (await exec(['redis-cli', '-p', String(this.port), 'ping'], { timeoutMs: 2000 }).catch(() => '')).includes('PONG'),
      timeoutMs,
    )
  }
}

export interface ClusterOptions {
  apis: number
  /** WORKER_QUEUES of each worker process. */
  workers: string[]
  env?: Record<string, string>
  /**
   * Started once PostgreSQL is up, before the service: what the service's DATABASE_URL points at
   * instead of PostgreSQL (a pooler). PostgreSQL itself stays DATABASE_DIRECT_URL.
   */
  databaseUrl?: (pg: PgCluster) => Promise<string>
}

export class Cluster {
  readonly root = mkdtempSync(join(tmpdir(), 'plm-faults-'))
  readonly logDir = join(this.root, 'logs')
  readonly pg = new PgCluster(this.root)
  redis!: RedisServer
  apis: (ManagedProcess & { port: number })[] = []
  workers: ManagedProcess[] = []
  readonly queuePrefix = 'faults'
  private serviceDatabaseUrl: string | undefined

  constructor(private options: ClusterOptions) {
    mkdirSync(this.logDir, { recursive: true })
    if (process.getuid?.() === 0) chownSync(this.root, uid('postgres'), gid('postgres'))
  }

  get env(): Record<string, string> {
    return {
      DATABASE_URL: this.serviceDatabaseUrl ?? this.pg.url,
      DATABASE_DIRECT_URL: this.pg.url,
      REDIS_URL: this.redis.url,
      QUEUE_PREFIX: this.queuePrefix,
      LOG_LEVEL: 'info',
      DATA_DIR: join(this.root, 'data'),
      SHUTDOWN_TIMEOUT_MS: '10000',
      ...this.options.env,
    }
  }

  async start(progress: (line: string) => void): Promise<void> {
    progress(`workspace ${this.root}`)
    await this.pg.init()
    await this.pg.start()
    await this.pg.createDatabase()
    progress(`PostgreSQL 15 on 127.0.0.1:${this.pg.port}`)
    if (this.options.databaseUrl) this.serviceDatabaseUrl = await this.options.databaseUrl(this.pg)
    this.redis = new RedisServer(await freePort(), join(this.root, 'redis'), this.logDir)
    this.redis.start()
    await this.redis.ready()
    progress(`redis-server on 127.0.0.1:${this.redis.port} (appendonly yes, appendfsync always)`)
    await exec(['bun', 'run', 'cli/migrate.ts'], { env: this.env })
    progress('migrated')
    for (let i = 0; i < this.options.apis; i++) {
      const port = await freePort()
      const api = Object.assign(
        new ManagedProcess(
          `api-${i + 1}`,
          ['bun', 'run', 'api/index.ts'],
          { ...this.env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` },
          this.logDir,
        ),
        { port },
      )
      this.apis.push(api)
    }
    this.options.workers.forEach((queues, i) => {
      this.workers.push(new ManagedProcess(`worker-${i + 1}`, ['bun', 'run', 'worker/index.ts'], { ...this.env, WORKER_QUEUES: queues }, this.logDir))
    })
    for (const p of [...this.apis, ...this.workers]) p.start()
    await Promise.all(this.apis.map((api) => this.apiReady(api)))
    await Promise.all(this.workers.map((w) => this.workerReady(w)))
    progress(`${this.apis.length} API processes (${this.apis.map((a) => `${a.name} pid ${a.pid} :${a.port}`).join(', ')})`)
    progress(`${this.workers.length} worker processes (${this.workers.map((w, i) => `${w.name} pid ${w.pid} [${this.options.workers[i]}]`).join(', ')})`)
  }

  baseUrl(api: { port: number }): string {
    return `http://127.0.0.1:${api.port}`
  }

  async apiReady(api: ManagedProcess & { port: number }, timeoutMs = 20_000): Promise<void> {
    await until(
      `${api.name} /readyz`,
      async () => {
        if (!api.alive) throw new Error(`${api.name} exited with ${api.exitCode}: ${this.tail(api)}`)
        return (
          (await fetch(`${this.baseUrl(api)}/readyz`).then(
            (r) => r.status,
            () => 0,
          )) === 200
        )
      },
      timeoutMs,
    )
  }

  async workerReady(worker: ManagedProcess, timeoutMs = 20_000): Promise<void> {
    await until(
      `${worker.name} to start`,
      async () => {
        if (!worker.alive) throw new Error(`${worker.name} exited with ${worker.exitCode}: ${this.tail(worker)}`)
        return readFileSync(worker.logs[worker.logs.length - 1], 'utf8').includes('"msg":"workers started"')
      },
      timeoutMs,
    )
  }

  tail(p: ManagedProcess, lines = 5): string {
    try {
      return readFileSync(p.logs[p.logs.length - 1], 'utf8')
        .trim()
        .split('\n')
        .slice(-lines)
        .join(' | ')
    } catch {
      return ''
    }
  }

  /**
   * A CLI command against the harness's stores; its output is kept for the secrets scan, except
   * for the commands whose purpose is to show a secret once (`secret: true`).
   */
  async cli(args: string[], options: { secret?: boolean } = {}): Promise<string> {
    const out = await exec(['bun', 'run', 'cli/index.ts', ...args], { env: this.env })
    if (options.secret) return out
    const log = join(this.logDir, `cli.${Date.now()}.${Math.random().toString(36).slice(2, 6)}.log`)
    await Bun.write(log, out)
    return out
  }

  /** Every byte any process wrote, for the secrets scan. */
  allLogs(): { file: string; text: string }[] {
    return readdirSync(this.logDir).map((f) => ({ file: f, text: readFileSync(join(this.logDir, f), 'utf8') }))
  }

  /** Stops everything this harness started: service processes, Redis, PostgreSQL; then the temp dir. */
  async stop(keep = false): Promise<void> {
    await Promise.all([...this.apis, ...this.workers].map((p) => p.stop().catch(() => {})))
    await this.redis?.stop().catch(() => {})
    await this.pg.stop().catch(() => {})
    if (!keep) rmSync(this.root, { recursive: true, force: true })
  }
}
