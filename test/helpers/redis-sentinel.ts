/**
 * A private Redis Sentinel topology on free loopback ports: one master, its replicas and three
 * sentinels (quorum 2), each a child process of the test with its own directory. Used by the
 * Sentinel tests and by fault scenario l; the shared 6379 instance is never touched.
 */
import { mkdirSync, openSync, closeSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import IORedis from 'ioredis'
import { eventually } from './eventually'
import { freePort } from './processes'

export const SENTINEL_MASTER = 'plm'

export interface RedisNode {
  name: string
  port: number
  proc: Subprocess | undefined
}

async function answers(port: number, timeoutMs = 10_000): Promise<void> {
  await eventually(
    async () => {
      const probe = new IORedis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
      probe.on('error', () => {})
      try {
        await probe.connect()
        return (await probe.ping()) === 'PONG'
      } finally {
        probe.disconnect()
      }
    },
    { timeoutMs, intervalMs: 50, what: `redis on ${port} to answer` },
  )
}

export class SentinelTopology {
  readonly master: RedisNode
  readonly replicas: RedisNode[]
  readonly sentinels: RedisNode[]

  private constructor(
    readonly dir: string,
    ports: number[],
    replicaCount: number,
    private readonly downAfterMs: number,
    private readonly nodeArgs: string[],
  ) {
    const [masterPort, ...rest] = ports
    this.master = { name: 'redis-master', port: masterPort, proc: undefined }
    this.replicas = rest.slice(0, replicaCount).map((port, i) => ({ name: `redis-replica-${i + 1}`, port, proc: undefined }))
    this.sentinels = rest.slice(replicaCount).map((port, i) => ({ name: `redis-sentinel-${i + 1}`, port, proc: undefined }))
  }

  /**
   * `downAfterMs`: how long the master may be silent before the sentinels call it down. Sentinel
   * pings every second (or every down-after, if shorter), so 1 s meant one late ping on a loaded
   * machine marked even the newly promoted master down (CI: `+sdown` on it 1.0 s after
   * `+switch-master`, the other replica never reconfigured, every ingest batch sent to PostgreSQL
   * for 13 s); 3 s leaves three pings of margin;
   * `nodeArgs`: redis-server options laid over the defaults (the benchmark turns AOF off, as the shared Redis runs).
   */
  static async start(dir: string, options: { replicas?: number; downAfterMs?: number; nodeArgs?: string[] } = {}): Promise<SentinelTopology> {
    const replicaCount = options.replicas ?? 1
    const ports: number[] = []
    while (ports.length < 1 + replicaCount + 3) {
      const port = await freePort()
      if (!ports.includes(port)) ports.push(port)
    }
    const topology = new SentinelTopology(dir, ports, replicaCount, options.downAfterMs ?? 3000, options.nodeArgs ?? [])
    mkdirSync(dir, { recursive: true })
    topology.startNode(topology.master)
    await answers(topology.master.port)
    for (const replica of topology.replicas) topology.startNode(replica, ['--replicaof', '127.0.0.1', String(topology.master.port)])
    for (const replica of topology.replicas) await answers(replica.port)
    await topology.untilReplicasOnline()
    for (const sentinel of topology.sentinels) topology.startSentinel(sentinel)
    for (const sentinel of topology.sentinels) await answers(sentinel.port)
    return topology
  }

  /** What the service's configuration names: REDIS_SENTINELS and REDIS_SENTINEL_MASTER. */
  get env(): Record<string, string> {
    return {
      REDIS_URL: 'redis://127.0.0.1',
      REDIS_SENTINELS: this.sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
      REDIS_SENTINEL_MASTER: SENTINEL_MASTER,
    }
  }

  /** Each node as operators run it: AOF fsynced on every write, noeviction. */
  startNode(node: RedisNode, extra: string[] = []): void {
    const dir = join(this.dir, node.name)
    mkdirSync(dir, { recursive: true })
    node.proc = this.spawn(node, [
      'redis-server',
      '--port',
      String(node.port),
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
      ...this.nodeArgs,
      ...extra,
    ])
  }

  private startSentinel(node: RedisNode): void {
    // Sentinel rewrites its file (known replicas, epochs): one file per sentinel.
    const file = join(this.dir, `${node.name}.conf`)
    writeFileSync(
      file,
      [
        `port ${node.port}`,
        'bind 127.0.0.1',
        'protected-mode no',
        `dir ${this.dir}`,
        `sentinel monitor ${SENTINEL_MASTER} 127.0.0.1 ${this.master.port} 2`,
        `sentinel down-after-milliseconds ${SENTINEL_MASTER} ${this.downAfterMs}`,
        `sentinel failover-timeout ${SENTINEL_MASTER} 10000`,
        `sentinel parallel-syncs ${SENTINEL_MASTER} 1`,
        '',
      ].join('\n'),
    )
    node.proc = this.spawn(node, ['redis-sentinel', file])
  }

  private spawn(node: RedisNode, cmd: string[]): Subprocess {
    const fd = openSync(join(this.dir, `${node.name}.log`), 'a')
    const proc = Bun.spawn(cmd, { stdout: fd, stderr: fd, stdin: 'ignore' })
    closeSync(fd)
    return proc
  }

  /** The master's address as the sentinels report it now. */
  async currentMasterPort(): Promise<number | undefined> {
    for (const sentinel of this.sentinels) {
      const client = new IORedis(sentinel.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
      client.on('error', () => {})
      try {
        await client.connect()
        const addr = (await client.call('SENTINEL', 'get-master-addr-by-name', SENTINEL_MASTER)) as [string, string] | null
        if (addr) return Number(addr[1])
      } catch {
        // This sentinel does not answer: ask the next.
      } finally {
        client.disconnect()
      }
    }
    return undefined
  }

  /** Until every replica is linked to the master (a replica still syncing would refuse a failover). */
  async untilReplicasOnline(timeoutMs = 10_000): Promise<void> {
    const client = new IORedis(this.master.port, '127.0.0.1', { maxRetriesPerRequest: 1 })
    let info = ''
    try {
      await eventually(
        async () => {
          info = await client.info('replication')
          return (info.match(/state=online/g)?.length ?? 0) >= this.replicas.length
        },
        {
          timeoutMs,
          intervalMs: 50,
          what: 'the replicas to be online',
          get detail() {
            return info.replace(/\r\n/g, ' ')
          },
        },
      )
    } finally {
      client.disconnect()
    }
  }

  /** kill -9 of one node (no shutdown, no AOF rewrite: the process is gone). */
  async kill(node: RedisNode): Promise<void> {
    node.proc?.kill('SIGKILL')
    await node.proc?.exited
    node.proc = undefined
  }

  /** Stops every process this topology started. */
  async stop(): Promise<void> {
    await Promise.all([...this.sentinels, ...this.replicas, this.master].map((n) => this.kill(n)))
  }
}
