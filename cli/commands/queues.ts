/**
 * `bun run cli queues`: the operator's view of the BullMQ queues (same figures as `/metrics`),
 * and the two things an operator does with failed jobs, which are kept until then (README
 * "Exhausted jobs"): retry them or drop them. A retry first puts the job's data back to where
 * the job starts from (an upload or image to processing, a delivery to pending) and then moves
 * the job itself back to waiting with its attempts reset, so it really runs again; a drop
 * removes the job and leaves its data failed for good. Only failed jobs are touched; waiting and
 * active jobs are never removed from here, so a slip of the hand cannot lose accepted work that
 * is still in flight.
 */
import type { Job } from 'bullmq'
import { MEDIA_JOB_HOOKS } from '../../shared/media/operations'
import { OUTREACH_JOB_HOOKS } from '../../shared/outreach/operations'
import { dataHooksOf, type JobDataHooksTable, type JobKind } from '../../shared/platform/jobs'
import { QUEUE_NAMES, type QueueName } from '../../shared/platform/queue-names'
import { queueFigures, type QueueFigures } from '../../shared/platform/queue-stats'
import { Queues, redisConnection } from '../../shared/platform/queues'
import { describeConnectionError } from '../../shared/platform/service-errors'
import { CliError, stringFlag, type CliContext, type Flags } from '../io'

export const usage = `  queues [--json]                                       waiting, active, delayed, failed, completed per queue
  queues retry --queue <name> (--id <job id> | --all) [--json]   reopen failed jobs' data and run them again
  queues drop  --queue <name> (--id <job id> | --all) [--json]   remove failed jobs; their data stays failed`

/** Failed jobs are read in pages so a large backlog never loads into memory at once. */
const PAGE = 500

const JOB_DATA_HOOKS: JobDataHooksTable = { ...MEDIA_JOB_HOOKS, ...OUTREACH_JOB_HOOKS }

export async function run(f: Flags, ctx: CliContext): Promise<void> {
  const [command] = f.positional
  if (command !== undefined && command !== 'retry' && command !== 'drop') throw new CliError(`unknown command "queues ${command}"\n${usage}`)
  const queue = command === undefined ? undefined : queueFlag(f)
  const id = stringFlag(f, 'id')
  const all = f.flags.all === true
  if (command !== undefined && (id === undefined) === !all) throw new CliError(`queues ${command} needs exactly one of --id <job id> or --all`)
  const queues = await openQueues(ctx)
  try {
    if (command === undefined || queue === undefined) return show(ctx, await queueFigures(queues))
    const q = queues.get(queue)
    const jobs = id !== undefined ? [await failedJob(q.getJob(id), queue, id)] : undefined
    // A retried job gets its full attempts and backoff again: the operator fixed the cause. Its
    // data is reopened first: a job that ran before would find it failed and do nothing.
    const hooksOf = (job: Job) => dataHooksOf(JOB_DATA_HOOKS, queue as JobKind, job.data)
    const done: string[] = []
    const skipped: string[] = []
    /** Only BullMQ's refusal means "no longer failed"; a database error stops the command. */
    const moved = async (move: () => Promise<unknown>, job: Job) => {
      try {
        await move()
        return true
      } catch {
        // The job left the failed state meanwhile (retried by another operator, removed by hand).
        skipped.push(job.id!)
        return false
      }
    }
    const apply = async (job: Job) => {
      if (command === 'retry') {
        await hooksOf(job)?.reopen(ctx)
        if (await moved(() => job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true }), job)) done.push(job.id!)
      } else if (await moved(() => job.remove(), job)) {
        await hooksOf(job)?.abandon(ctx)
        done.push(job.id!)
      }
    }
    if (jobs) for (const job of jobs) await apply(job)
    else {
      // Each pass takes the first page again: the jobs handled in the previous pass left the
      // failed set. Jobs that could not be handled are skipped by offset. Bounded by the count
      // at the start, so retried jobs that fail again meanwhile are not retried in a loop.
      const total = await q.getFailedCount()
      while (done.length + skipped.length < total) {
        const page = (await q.getFailed(skipped.length, skipped.length + PAGE - 1)).filter(Boolean)
        if (page.length === 0) break
        for (const job of page.slice(0, total - done.length - skipped.length)) await apply(job)
        ctx.progress(`queues ${command} ${queue}: ${done.length} jobs`)
      }
    }
    const verb = command === 'retry' ? 'retried' : 'dropped'
    ctx.out({ queue, [verb]: done.length, ids: done, skipped }, `${verb} ${done.length} failed job${done.length === 1 ? '' : 's'} of ${queue}${skipped.length ? ` (${skipped.length} had left the failed state)` : ''}`)
  } finally {
    await queues.close().catch(() => {})
    queues.connection.disconnect()
  }
}

async function openQueues(ctx: CliContext): Promise<Queues> {
  const connection = redisConnection(ctx.config, 'producer', { retryStrategy: () => null, lazyConnect: true })
  connection.on('error', () => {})
  try {
    await connection.connect()
  } catch (error) {
    connection.disconnect()
    throw new CliError(describeConnectionError('Redis', ctx.config.redisUrl, error, ctx.config.redisSentinel))
  }
  return new Queues(connection, ctx.config.queuePrefix)
}

function queueFlag(f: Flags): QueueName {
  const name = stringFlag(f, 'queue', true)
  if (!(QUEUE_NAMES as readonly string[]).includes(name)) throw new CliError(`unknown queue "${name}"; known: ${QUEUE_NAMES.join(', ')}`)
  return name as QueueName
}

async function failedJob(pending: Promise<Job | undefined>, queue: string, id: string): Promise<Job> {
  const job = await pending
  if (!job) throw new CliError(`no job ${id} in ${queue}`)
  const state = await job.getState()
  if (state !== 'failed') throw new CliError(`job ${id} of ${queue} is ${state}, not failed; only failed jobs can be retried or dropped`)
  return job
}

function show(ctx: CliContext, figures: QueueFigures[]): void {
  const rows = figures.map((f) => ({
    queue: f.queue,
    waiting: f.counts.waiting + f.counts.prioritized,
    active: f.counts.active,
    delayed: f.counts.delayed,
    failed: f.counts.failed,
    completed: f.counts.completed,
    processed_completed: f.processed.completed,
    processed_failed: f.processed.failed,
    unavailable_waits: f.waits.unavailable,
    paused: f.paused,
  }))
  const head = ['queue', 'waiting', 'active', 'delayed', 'failed', 'completed', 'done total', 'failed total']
  const cells = rows.map((r) => [r.queue + (r.paused ? ' (paused)' : ''), r.waiting, r.active, r.delayed, r.failed, r.completed, r.processed_completed, r.processed_failed].map(String))
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)))
  const line = (c: string[]) => c.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ')
  ctx.out({ prefix: ctx.config.queuePrefix, queues: rows }, [line(head), ...cells.map(line)].join('\n'))
}
