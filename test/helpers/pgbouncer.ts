/**
 * A PgBouncer of our own in transaction pooling mode, on a free loopback port, in front of a
 * PostgreSQL given by port (the shared test instance or a private cluster). PgBouncer refuses to
 * run as root, so as root it runs as the postgres user; it is stopped by the PID it wrote.
 */
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventually } from './eventually'
import { freePort } from './processes'

export interface PgBouncerOptions {
  /** The PostgreSQL behind it. */
  upstreamPort: number
  /** Server connections per database/user pair (PgBouncer's `default_pool_size`). */
  poolSize: number
  maxClientConn?: number
  /**
   * How long a client's query may wait for a server (`query_wait_timeout`, PgBouncer's default
   * 120 s). In front of a node that can die, a few seconds: a query sent just after the node died
   * waits for a server that will not come, and only this bound answers it (FATAL 08P01, a 503).
   */
  queryWaitTimeoutSeconds?: number
}

export class PgBouncer {
  readonly dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'))
  port = 0
  private proc: ReturnType<typeof Bun.spawn> | undefined

  constructor(private readonly options: PgBouncerOptions) {}

  /** `postgres://postgres@127.0.0.1:<port>/<database>` through the pooler. */
  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`
  }

  get logFile(): string {
    return join(this.dir, 'pgbouncer.log')
  }

  async start(): Promise<void> {
    this.port = await freePort()
    const ini = join(this.dir, 'pgbouncer.ini')
    writeFileSync(join(this.dir, 'users.txt'), '"postgres" ""\n')
    writeFileSync(
      ini,
      [
        '[databases]',
        `* = host=127.0.0.1 port=${this.options.upstreamPort}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${this.port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${join(this.dir, 'users.txt')}`,
        'admin_users = postgres',
        'pool_mode = transaction',
        `default_pool_size = ${this.options.poolSize}`,
        'min_pool_size = 0',
        'reserve_pool_size = 0',
        `max_client_conn = ${this.options.maxClientConn ?? 400}`,
        ...(this.options.queryWaitTimeoutSeconds ? [`query_wait_timeout = ${this.options.queryWaitTimeoutSeconds}`] : []),
        `logfile = ${this.logFile}`,
        `pidfile = ${join(this.dir, 'pgbouncer.pid')}`,
        // Connections and disconnections of hundreds of pooled clients are noise in its log.
        'log_connections = 0',
        'log_disconnections = 0',
        '',
      ].join('\n'),
    )
    const asRoot = process.getuid?.() === 0
    if (asRoot) chownSync(this.dir, uid('postgres'), uid('postgres', 3))
    if (asRoot) for (const f of ['pgbouncer.ini', 'users.txt']) chownSync(join(this.dir, f), uid('postgres'), uid('postgres', 3))
    const cmd = ['/usr/sbin/pgbouncer', ini]
    this.proc = Bun.spawn(asRoot ? ['runuser', '-u', 'postgres', '--', ...cmd] : cmd, { stdout: 'ignore', stderr: 'ignore', stdin: 'ignore' })
    const proc = this.proc
    const logTail = () => this.log().slice(-500)
    const state = await eventually(async () => (proc.exitCode !== null ? 'exited' : (await this.show('version').catch(() => [])).length > 0 && 'up'), {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'pgbouncer to answer',
      get detail() {
        return logTail()
      },
    })
    if (state === 'exited') throw new Error(`pgbouncer exited with ${proc.exitCode}: ${logTail()}`)
  }

  /** `SHOW <what>` on the admin console (simple protocol only: psql), rows as objects. */
  async show(what: 'pools' | 'servers' | 'version' | 'stats'): Promise<Record<string, string>[]> {
    const proc = Bun.spawn(
      [
        'psql',
        '-h',
        '127.0.0.1',
        '-p',
        String(this.port),
        '-U',
        'postgres',
        '-d',
        'pgbouncer',
        '-X',
        '-A',
        '-F',
        '\t',
        '-P',
        'footer=off',
        '-c',
        `show ${what}`,
      ],
      { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' },
    )
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    if (code !== 0) throw new Error(`psql show ${what} exited ${code}`)
    const [header, ...rows] = out.trim().split('\n')
    const names = header.split('\t')
    return rows.map((r) => Object.fromEntries(r.split('\t').map((v, i) => [names[i], v])))
  }

  /** Server connections PgBouncer holds to `database` now (SHOW SERVERS). */
  async serverConnections(database: string): Promise<number> {
    return (await this.show('servers')).filter((s) => s.database === database).length
  }

  log(): string {
    try {
      return readFileSync(this.logFile, 'utf8')
    } catch {
      return ''
    }
  }

  async stop(): Promise<void> {
    let pid = 0
    try {
      pid = Number(readFileSync(join(this.dir, 'pgbouncer.pid'), 'utf8').trim())
    } catch {}
    if (pid) process.kill(pid, 'SIGTERM')
    else this.proc?.kill('SIGTERM')
    await this.proc?.exited
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/** A user's uid (field 2) or gid (field 3) from /etc/passwd. */
function uid(user: string, field = 2): number {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${user}:`))
  if (!line) throw new Error(`no ${user} user: PostgreSQL is not installed`)
  return Number(line.split(':')[field])
}
