/**
 * A private PostgreSQL primary with one streaming standby on loopback, as Patroni or a cloud
 * provider runs them: the primary waits for the standby's flush on every commit
 * (`synchronous_standby_names = '*'`, `synchronous_commit = on`), the standby is a
 * `pg_basebackup -R` copy, and a failover is `kill -9` of the primary then `pg_ctl promote`.
 * Optionally the standby applies WAL late (`recovery_min_apply_delay`), a lagging read replica.
 * Run as the postgres user when root; never touches the shared 5432 service.
 */
import { chownSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import postgres from 'postgres'
import { freePort } from '../helpers/processes'
import { exec, gid, uid, until } from './cluster'

const PG_BIN = '/usr/lib/postgresql/15/bin'
const asPostgres = (args: string[]): string[] => (process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...args] : args)

export class PgNode {
  port = 0
  running = false

  constructor(
    readonly name: string,
    readonly dir: string,
  ) {}

  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`
  }

  async start(settings: Record<string, string>): Promise<void> {
    // fsync off: the faults are process deaths, not power losses; what a commit waits for is
    // the standby's acknowledgement, which fsync does not change.
    const options = { listen_addresses: '127.0.0.1', fsync: 'off', max_connections: '300', shared_buffers: '64MB', ...settings }
    const opts = [`-p ${this.port} -k ${this.dir}`, ...Object.entries(options).map(([k, v]) => `-c ${k}=${v}`)].join(' ')
    await exec(asPostgres([`${PG_BIN}/pg_ctl`, '-D', this.dir, '-l', join(this.dir, 'server.log'), '-o', opts, '-w', '-t', '30', 'start']))
    this.running = true
  }

  async stop(): Promise<void> {
    if (!this.running) return
    await exec(asPostgres([`${PG_BIN}/pg_ctl`, '-D', this.dir, '-m', 'immediate', '-w', '-t', '30', 'stop']))
    this.running = false
  }

  /**
   * The machine dies: SIGKILL to the postmaster and every one of its processes at once, so
   * client connections are cut and nothing is flushed or handed over.
   */
  kill9(): void {
    const postmaster = Number(readFileSync(join(this.dir, 'postmaster.pid'), 'utf8').split('\n')[0])
    const children = readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return Number(readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === postmaster
        } catch {
          return false
        }
      })
    for (const pid of [postmaster, ...children.map(Number)]) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
    this.running = false
  }

  async promote(): Promise<void> {
    await exec(asPostgres([`${PG_BIN}/pg_ctl`, '-D', this.dir, '-w', '-t', '30', 'promote']))
  }
}

export interface TopologyOptions {
  /** Standby's `recovery_min_apply_delay` in ms (a replica that shows writes late). */
  applyDelayMs?: number
  /** Commits wait for the standby (default true). */
  synchronous?: boolean
}

export class PgTopology {
  readonly primary: PgNode
  readonly standby: PgNode

  constructor(
    readonly root: string,
    private options: TopologyOptions = {},
  ) {
    this.primary = new PgNode('primary', join(root, 'pg-primary'))
    this.standby = new PgNode('standby', join(root, 'pg-standby'))
  }

  /** initdb + start the primary, create `databases`, copy it to the standby and start streaming. */
  async start(databases: string[]): Promise<void> {
    mkdirSync(this.root, { recursive: true })
    if (process.getuid?.() === 0) chownSync(this.root, uid('postgres'), gid('postgres'))
    mkdirSync(this.primary.dir)
    if (process.getuid?.() === 0) chownSync(this.primary.dir, uid('postgres'), gid('postgres'))
    await exec(asPostgres([`${PG_BIN}/initdb`, '-D', this.primary.dir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']))
    this.primary.port = await freePort()
    await this.primary.start({ wal_level: 'replica', max_wal_senders: '5', synchronous_commit: 'on' })
    const admin = postgres(this.primary.url('postgres'), { max: 1, onnotice: () => {} })
    try {
      for (const db of databases) await admin.unsafe(`create database "${db}"`)
    } finally {
      await admin.end({ timeout: 2 })
    }
    // Synchronous only once the standby exists: until then every commit would wait.
    await exec(
      asPostgres([
        `${PG_BIN}/pg_basebackup`,
        '-D',
        this.standby.dir,
        '-h',
        '127.0.0.1',
        '-p',
        String(this.primary.port),
        '-U',
        'postgres',
        '-X',
        'stream',
        '-R',
        '--no-sync',
        '--checkpoint=fast',
      ]),
    )
    this.standby.port = await freePort()
    // Once promoted the standby has no standby of its own: it must not wait for one (what
    // Patroni's non-strict synchronous mode does when the other node is gone).
    await this.standby.start({
      hot_standby: 'on',
      synchronous_standby_names: "''",
      ...(this.options.applyDelayMs ? { recovery_min_apply_delay: `${this.options.applyDelayMs}ms` } : {}),
    })
    if (this.options.synchronous ?? true) {
      const sql = postgres(this.primary.url('postgres'), { max: 1, onnotice: () => {} })
      try {
        await sql.unsafe(`alter system set synchronous_standby_names = '*'`)
        await sql`select pg_reload_conf()`
      } finally {
        await sql.end({ timeout: 2 })
      }
    }
    await this.waitStreaming()
  }

  /** The standby streams (and, when synchronous, is the primary's synchronous standby). */
  async waitStreaming(timeoutMs = 30_000): Promise<void> {
    const sql = postgres(this.primary.url('postgres'), { max: 1, onnotice: () => {} })
    try {
      const wanted = (this.options.synchronous ?? true) ? 'sync' : 'async'
      await until(
        'the standby to stream',
        async () => (await sql`select 1 from pg_stat_replication where state = 'streaming' and sync_state = ${wanted}`).length > 0,
        timeoutMs,
      )
    } finally {
      await sql.end({ timeout: 2 })
    }
  }

  /** Both nodes, the standby first: the guard of target_session_attrs must skip it. */
  multiHostUrl(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.standby.port},127.0.0.1:${this.primary.port}/${database}?target_session_attrs=read-write`
  }

  async stop(): Promise<void> {
    await Promise.all([this.primary.stop().catch(() => {}), this.standby.stop().catch(() => {})])
  }
}
