/**
 * Runs one BullMQ Worker per queue picked by WORKER_QUEUES, and stops them in order with a bound:
 * running jobs finish, or (past the bound) are left to BullMQ's stalled-job check, which hands
 * them to another worker — a job is never lost.
 */
import { hostname } from 'node:os'
import { Worker, type JobsOptions } from 'bullmq'
import type IORedis from 'ioredis'
import { createDatabase } from '../db/client'
import type { Config } from '../shared/platform/config'
import type { JobKind } from '../shared/platform/jobs'
import type { Logger } from '../shared/platform/logger'
import type { QueueName } from '../shared/platform/queue-names'
import { Queues, redisConnection } from '../shared/platform/queues'
import { describeConnectionError } from '../shared/platform/service-errors'
import { ImagePool } from '../shared/media/pool'
import { createStorage } from '../shared/platform/storage'
import type { WorkerDeps } from './deps'
import { PROCESSORS } from './processors'
import { workerOptionsFor } from './queue-config'
import { startMaintenance } from './maintenance'
import { startWebhookRelay } from '../shared/webhooks/relay'
import { stopWebhookRunners } from '../shared/webhooks/delivery'
import { isExhausted, recordExhaustedJob, withUnavailablePolicy } from './exhausted'

export interface RunningWorkers {
  deps: WorkerDeps
  workers: Worker[]
  close(timeoutMs?: number): Promise<void>
}

export class WorkerStartupError extends Error {
  override name = 'WorkerStartupError'
}

export interface WorkerOptions {
  /** Laid over the job catalog's options for the jobs these workers queue (tests: millisecond backoffs). */
  jobOptions?: Partial<Record<JobKind, JobsOptions>>
}

export async function startWorkers(
  config: Config,
  logger: Logger,
  queueNames: QueueName[] = config.workerQueues,
  options: WorkerOptions = {},
): Promise<RunningWorkers> {
  const database = createDatabase(config.databaseUrl, { max: Math.max(10, Math.min(config.dbPoolSize, 30)), directUrl: config.databaseDirectUrl })
  try {
    await database.sql`select 1`
  } catch (error) {
    await database.close(1).catch(() => {})
    throw new WorkerStartupError(describeConnectionError('PostgreSQL', config.databaseUrl, error))
  }
  const connection = redisConnection(config, 'worker')
  connection.on('error', () => {})
  try {
    await Promise.race([connection.ping(), new Promise((_, reject) => setTimeout(() => reject(new Error('ECONNREFUSED')), 3000))])
  } catch (error) {
    connection.disconnect()
    await database.close(1).catch(() => {})
    throw new WorkerStartupError(describeConnectionError('Redis', config.redisUrl, error, config.redisSentinel))
  }
  const producer = redisConnection(config, 'producer')
  producer.on('error', () => {})
  const queues = new Queues(producer, config.queuePrefix, { jobOptions: options.jobOptions })
  const storage = await createStorage(config)
  await storage.ensureReady()
  const deps: WorkerDeps = { config, database, queues, logger, storage, imagePool: new ImagePool(config.imageThreads) }

  const workers = queueNames.map((name) => createWorker(name, deps, connection))
  const maintenance = startMaintenance(deps)
  // The outbox relay feeds the webhook-delivery queue: it runs where that queue is consumed.
  const relay = queueNames.includes('webhook-delivery') ? startWebhookRelay(deps) : undefined
  logger.info('workers started', { queues: queueNames })

  return {
    deps,
    workers,
    async close(timeoutMs = config.shutdownTimeoutMs) {
      // One deadline for the whole drain. The relay stops beside the consumers, not before them:
      // waiting for its batch first took time from the consumers' bound, and the process's hard
      // limit (lifecycle.ts) ended it before the consumers' own timeout was ever reached.
      const deadline = performance.now() + timeoutMs
      maintenance.stop()
      stopWebhookRunners(deps)
      // What has not stopped yet, named in the warning below: the part that held the drain.
      const unfinished = new Set<string>()
      const tracked = (name: string, stopping: Promise<unknown>) => {
        unfinished.add(name)
        return stopping.finally(() => unfinished.delete(name))
      }
      const graceful = Promise.all([relay && tracked('webhook relay', relay.stop()), ...workers.map((w, i) => tracked(queueNames[i], w.close()))])
      if (!(await settlesBy(graceful, deadline))) {
        // A graceful close() in progress cannot be turned into a forced one (BullMQ answers a
        // second close() with the first), so the connections are cut instead: unfinished jobs
        // keep their lock in Redis until it expires, and the stalled check hands them to a worker
        // again. A relay batch cut off is rolled back: its outbox rows stay for the next one.
        logger.warn('workers did not finish in time; unfinished jobs return to the queue via the stalled check', {
          timeout_ms: timeoutMs,
          unfinished: [...unfinished],
        })
      }
      // What is left closes connections: each step bounded, all within CLOSE_MS after the drain.
      const closeBy = performance.now() + CLOSE_MS
      const slow = [(await settlesBy(deps.imagePool.close(), closeBy)) ? '' : 'image pool', (await settlesBy(queues.close(), closeBy)) ? '' : 'queues']
      if (slow.some(Boolean)) logger.warn('closing took longer than its bound; cut off', { bound_ms: CLOSE_MS, unfinished: slow.filter(Boolean) })
      producer.disconnect()
      connection.disconnect()
      await database.close(Math.max(0.1, (closeBy + CLOSE_MS - performance.now()) / 1000))
    },
  }
}

/**
 * After the drain's bound, the time to close the pools and connections. With the drain's own
 * SHUTDOWN_TIMEOUT_MS, two of these stay within the 5 s the process adds as its hard limit
 * (worker/index.ts), so the limit is a last resort, not the way a busy worker stops.
 */
const CLOSE_MS = 2000

/** Whether `work` settled (either way) before `deadline` (performance.now() time); never waits past it. */
async function settlesBy(work: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, deadline - performance.now()))))
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ])
  } finally {
    clearTimeout(timer)
  }
}

function createWorker(name: QueueName, deps: WorkerDeps, connection: IORedis): Worker {
  const log = deps.logger.child({ queue: name })
  const worker = new Worker(name, withUnavailablePolicy(name, PROCESSORS[name](deps), deps, log), {
    connection,
    prefix: deps.config.queuePrefix,
    autorun: true,
    // Stored on each job it takes (`processedBy`): operators and the fault harness see which process runs a job.
    name: `${hostname()}:${process.pid}`,
    // Job outcome counts kept in Redis for /metrics and `cli queues`, shared by all replicas.
    metrics: { maxDataPoints: 60 * 24 * 7 },
    ...workerOptionsFor(name, deps.config),
    // One job per image thread plus one fetching/storing while the threads encode.
    ...(name === 'image-watermark' ? { concurrency: deps.config.imageThreads + 1 } : {}),
  })
  worker.on('failed', (job, error) => {
    if (!job || !isExhausted(job, error)) {
      log.warn('job failed', { job_id: job?.id, attempts: job?.attemptsMade, error: error.message })
      return
    }
    // Kept in the failed set (jobs.ts: removeOnFail false) until `cli queues retry|drop`.
    log.error('job exhausted its retries', { job_id: job.id, attempts: job.attemptsMade, error: error.message, kept_for: 'cli queues retry|drop' })
    recordExhaustedJob(deps, name, job).catch((e: Error) =>
      log.error('could not mark the data of an exhausted job failed; the sweep will', { job_id: job.id, error: e.message }),
    )
  })
  worker.on('error', (error) => log.error('worker error', { error: error.message }))
  return worker
}
