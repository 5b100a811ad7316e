/**
 * BullMQ producers. The API's connection fails fast when Redis is down (no offline queue), so
 * callers can fall back (the ingest path writes to PostgreSQL instead) rather than hang.
 */
import { Queue } from 'bullmq'
import IORedis, { type RedisOptions } from 'ioredis'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import type { TSchema } from '@sinclair/typebox'
import { QUEUE_NAMES, type QueueName } from './queue-names'
import { JOBS, type JobKind, type JobPayload } from './jobs'
import { asRedisFailure } from './unavailable'

export function redisConnection(url: string, role: 'producer' | 'worker', extra: RedisOptions = {}): IORedis {
  return new IORedis(url, {
    // Workers block on Redis and must retry forever (BullMQ requirement); producers fail fast.
    maxRetriesPerRequest: role === 'worker' ? null : 1,
    enableOfflineQueue: role === 'worker',
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(100 * 2 ** times, 2000),
    lazyConnect: false,
    ...extra,
  })
}

/** Payload checkers compiled once per job kind: the ingest enqueues batches on its hot path. */
const checkers = new Map<JobKind, TypeCheck<TSchema>>()
const checkerOf = (kind: JobKind) => checkers.get(kind) ?? checkers.set(kind, TypeCompiler.Compile(JOBS[kind].payload as TSchema)).get(kind)!

export class Queues {
  readonly byName: Map<QueueName, Queue>
  constructor(readonly connection: IORedis, readonly prefix: string) {
    this.byName = new Map(QUEUE_NAMES.map((name) => [name, new Queue(name, { connection, prefix })]))
    // Connection errors reach callers as rejected calls (and /readyz); without a listener BullMQ
    // prints each one as a stack trace on stderr, once per queue, for as long as Redis is down.
    for (const queue of this.byName.values()) queue.on('error', () => {})
  }

  get(name: QueueName): Queue {
    return this.byName.get(name)!
  }

  async enqueue<K extends JobKind>(kind: K, payload: JobPayload<K>, options: { delay?: number } = {}) {
    const def = JOBS[kind]
    if (!checkerOf(kind).Check(payload)) throw new Error(`invalid ${kind} payload`)
    try {
      return await this.get(def.queue).add(def.name, payload, { ...def.options, jobId: def.jobId(payload as never), ...options })
    } catch (error) {
      throw asRedisFailure(error)
    }
  }

  async enqueueBulk<K extends JobKind>(kind: K, payloads: JobPayload<K>[]) {
    const def = JOBS[kind]
    try {
      return await this.get(def.queue).addBulk(payloads.map((data) => ({ name: def.name, data, opts: { ...def.options, jobId: def.jobId(data as never) } })))
    } catch (error) {
      throw asRedisFailure(error)
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.byName.values()].map((q) => q.close()))
  }
}
