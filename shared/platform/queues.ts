/**
 * BullMQ producers. The API's connection fails fast when Redis is down (no offline queue), so
 * callers can fall back (the ingest path writes to PostgreSQL instead) rather than hang.
 */
import { Queue, type JobsOptions } from 'bullmq'
import IORedis, { type RedisOptions } from 'ioredis'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import type { TSchema } from '@sinclair/typebox'
import type { RedisSentinel } from './config'
import { QUEUE_NAMES, type QueueName } from './queue-names'
import { JOBS, type JobKind, type JobPayload } from './jobs'
import { asRedisFailure } from './unavailable'

/** Where Redis is: a URL, or (the configuration's shape) a URL with the sentinels that name its master. */
export type RedisTarget = string | { redisUrl: string; redisSentinel?: RedisSentinel }

export function redisConnection(target: RedisTarget, role: 'producer' | 'worker', extra: RedisOptions = {}): IORedis {
  const options: RedisOptions = {
    // Workers block on Redis and must retry forever (BullMQ requirement); producers fail fast.
    maxRetriesPerRequest: role === 'worker' ? null : 1,
    enableOfflineQueue: role === 'worker',
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(100 * 2 ** times, 2000),
    // A master demoted by a failover answers writes with READONLY: reconnect, so that Sentinel
    // names the new master (the command itself fails and is retried or falls back by its caller).
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
    lazyConnect: false,
  }
  const { url, sentinel } = typeof target === 'string' ? { url: target, sentinel: undefined } : { url: target.redisUrl, sentinel: target.redisSentinel }
  if (!sentinel) return new IORedis(url, { ...options, ...extra })
  const retryStrategy = extra.retryStrategy ?? options.retryStrategy
  // The sentinels are retried as the master is (never, for a one-shot CLI connection).
  return new IORedis({ ...options, ...sentinelOptions(url, sentinel), sentinelRetryStrategy: retryStrategy ?? undefined, ...extra })
}

/** REDIS_URL supplies the credentials, database and TLS; the sentinels supply the master's address. */
function sentinelOptions(url: string, sentinel: RedisSentinel): RedisOptions {
  const parsed = new URL(url)
  return {
    sentinels: sentinel.sentinels,
    name: sentinel.master,
    role: 'master',
    username: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    db: Number(parsed.pathname.slice(1)) || 0,
    tls: parsed.protocol === 'rediss:' ? {} : undefined,
    // Off: in ioredis 6.0.0 a +switch-master that arrives while the client is reconnecting (the
    // master was killed) makes that connect fail, and a failed connect ends the client for good —
    // /readyz stayed 503 after a promotion. A dead master closes the sockets and a demoted one
    // answers READONLY (reconnectOnError above); either way the reconnect asks the sentinels.
    failoverDetector: false,
  }
}

/** Payload checkers compiled once per job kind: the ingest enqueues batches on its hot path. */
const checkers = new Map<JobKind, TypeCheck<TSchema>>()
function checkerOf(kind: JobKind): TypeCheck<TSchema> {
  let checker = checkers.get(kind)
  if (!checker) {
    checker = TypeCompiler.Compile(JOBS[kind].payload as TSchema)
    checkers.set(kind, checker)
  }
  return checker
}

export interface QueuesOptions {
  /**
   * Options laid over the catalog's per job kind (attempts, backoff). Tests use it for backoffs
   * of milliseconds; production uses the catalog as it is.
   */
  jobOptions?: Partial<Record<JobKind, JobsOptions>>
}

/** Where a job of a queue is, as far as its data's owner needs to know (the sweeps). */
export type JobPresence = 'missing' | 'failed' | 'live'

export class Queues {
  readonly byName: Map<QueueName, Queue>
  private readonly jobOptions: Partial<Record<JobKind, JobsOptions>>
  constructor(
    readonly connection: IORedis,
    readonly prefix: string,
    options: QueuesOptions = {},
  ) {
    this.jobOptions = options.jobOptions ?? {}
    this.byName = new Map(QUEUE_NAMES.map((name) => [name, new Queue(name, { connection, prefix })]))
    // Connection errors reach callers as rejected calls (and /readyz); without a listener BullMQ
    // prints each one as a stack trace on stderr, once per queue, for as long as Redis is down.
    for (const queue of this.byName.values()) queue.on('error', () => {})
  }

  get(name: QueueName): Queue {
    const queue = this.byName.get(name)
    // The map holds every QueueName (the constructor's QUEUE_NAMES).
    if (!queue) throw new Error(`no queue ${name}`)
    return queue
  }

  /** The options a new job of this kind gets: the catalog's, with this instance's overrides. */
  optionsOf(kind: JobKind): JobsOptions {
    return { ...JOBS[kind].options, ...this.jobOptions[kind] }
  }

  /**
   * `priority` (1 = first) puts the job behind every job queued without one, and in that order
   * among prioritised jobs (BullMQ takes its wait list first, then the prioritised set).
   */
  async enqueue<K extends JobKind>(kind: K, payload: JobPayload<K>, options: { delay?: number; priority?: number } = {}) {
    const def = JOBS[kind]
    if (!checkerOf(kind).Check(payload)) throw new Error(`invalid ${kind} payload`)
    try {
      return await this.get(def.queue).add(def.name, payload, { ...this.keyedOptionsOf(kind, payload), ...options })
    } catch (error) {
      throw asRedisFailure(error)
    }
  }

  /** Many jobs of one kind in one round trip; each gets what `enqueue` would give it. */
  async enqueueBulk<K extends JobKind>(kind: K, payloads: JobPayload<K>[]) {
    const def = JOBS[kind]
    if (!payloads.every((payload) => checkerOf(kind).Check(payload))) throw new Error(`invalid ${kind} payload`)
    try {
      return await this.get(def.queue).addBulk(payloads.map((data) => ({ name: def.name, data, opts: this.keyedOptionsOf(kind, data) })))
    } catch (error) {
      throw asRedisFailure(error)
    }
  }

  /** The kind's options with the job id and deduplication the catalog derives from this payload. */
  private keyedOptionsOf<K extends JobKind>(kind: K, payload: JobPayload<K>): JobsOptions {
    const def: { jobId: (p: never) => string | undefined; deduplication?: (p: never) => JobsOptions['deduplication'] } = JOBS[kind]
    return { ...this.optionsOf(kind), jobId: def.jobId(payload as never), ...(def.deduplication && { deduplication: def.deduplication(payload as never) }) }
  }

  /**
   * Whether each job id of the queue exists and whether it failed for good, in one round trip
   * (the sweeps check thousands of rows against their jobs). A completed job counts as live: its
   * id still blocks a new job, and its data's owner has already recorded the outcome.
   */
  async presenceOf(name: QueueName, jobIds: string[]): Promise<Map<string, JobPresence>> {
    const out = new Map<string, JobPresence>()
    if (jobIds.length === 0) return out
    const q = this.get(name)
    const failedKey = q.toKey('failed')
    const pipeline = this.connection.pipeline()
    for (const id of jobIds) pipeline.exists(q.toKey(id)).zscore(failedKey, id)
    let replies: [Error | null, unknown][] | null
    try {
      replies = await pipeline.exec()
    } catch (error) {
      throw asRedisFailure(error)
    }
    if (!replies) throw asRedisFailure(new Error('pipeline aborted'))
    for (const [i, id] of jobIds.entries()) {
      const [existsErr, exists] = replies[2 * i]
      const [scoreErr, score] = replies[2 * i + 1]
      if (existsErr || scoreErr) throw asRedisFailure(existsErr ?? scoreErr)
      out.set(id, exists === 0 ? 'missing' : score !== null ? 'failed' : 'live')
    }
    return out
  }

  async close(): Promise<void> {
    await Promise.all([...this.byName.values()].map((q) => q.close()))
  }
}
