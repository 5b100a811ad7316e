/**
 * `queues`: the operator's view of the BullMQ queues (same figures as `/metrics`),
 * and the two things an operator does with failed jobs, which are kept until then (docs/operations.md
 * "Exhausted jobs"): retry them or drop them. A retry first puts the job's data back to where
 * the job starts from (an upload or image to processing, a delivery to pending) and then moves
 * the job itself back to waiting with its attempts reset, so it really runs again; a drop
 * removes the job and leaves its data failed for good. Only failed jobs are touched; waiting and
 * active jobs are never removed from here, so a slip of the hand cannot lose accepted work that
 * is still in flight.
 */
import type { Job } from 'bullmq'
import type { JobKind } from '../../shared/platform/jobs'
import { QUEUE_NAMES, type QueueName } from '../../shared/platform/queue-names'
import type { QueueFigures } from '../../shared/platform/queue-stats'
import type { Queues } from '../../shared/platform/queues'
import type { CliContext } from '../io'
import { CliError, command, UsageError, type Group } from '../spec'

/** Failed jobs are read in pages so a large backlog never loads into memory at once. */
const PAGE = 500

const SELECTION = {
  queue: { value: '<name>', required: true, choices: QUEUE_NAMES, help: 'the queue' },
  id: { value: '<job id>', help: 'one failed job (or --all)' },
  all: { help: 'every failed job of the queue (or --id)' },
} as const

type Selection = { queue: QueueName; id: string | undefined; all: boolean }

const oneSelection = (verb: string) => (args: Selection) => {
  if ((args.id === undefined) === !args.all) throw new UsageError(`queues ${verb} needs exactly one of --id <job id> or --all`)
}

export const queues: Group = {
  name: 'queues',
  summary: 'the BullMQ queues: figures, and retrying or dropping failed jobs',
  defaultCommand: 'status',
  commands: {
    status: command({
      summary: 'waiting, active, delayed, failed and completed jobs per queue (the figures of /metrics)',
      options: {},
      async run(_args, ctx) {
        const { queueFigures } = await import('../../shared/platform/queue-stats')
        await withQueues(ctx, async (q) => show(ctx, await queueFigures(q)))
      },
    }),
    retry: command({
      summary: "reopen failed jobs' data and run them again, attempts reset",
      description: 'Only failed jobs are touched. Progress on stderr when it is a terminal.',
      options: SELECTION,
      check: oneSelection('retry'),
      run: (args, ctx) => handleFailed('retry', args, ctx),
    }),
    drop: command({
      summary: 'remove failed jobs; their data stays failed for good',
      description: 'Only failed jobs are touched: waiting and active jobs are never removed from here.',
      options: SELECTION,
      check: oneSelection('drop'),
      run: (args, ctx) => handleFailed('drop', args, ctx),
    }),
  },
}

async function handleFailed(verbName: 'retry' | 'drop', args: Selection, ctx: CliContext): Promise<void> {
  const { queue, id } = args
  const [{ MEDIA_JOB_HOOKS }, { OUTREACH_JOB_HOOKS }, { dataHooksOf }] = await Promise.all([
    import('../../shared/media/operations'),
    import('../../shared/outreach/operations'),
    import('../../shared/platform/jobs'),
  ])
  const jobDataHooks = { ...MEDIA_JOB_HOOKS, ...OUTREACH_JOB_HOOKS }
  await withQueues(ctx, async (queues) => {
    const q = queues.get(queue)
    const jobs = id !== undefined ? [await failedJob(q.getJob(id), queue, id)] : undefined
    // A retried job gets its full attempts and backoff again: the operator fixed the cause. Its
    // data is reopened first: a job that ran before would find it failed and do nothing.
    const hooksOf = (job: Job) => dataHooksOf(jobDataHooks, queue as JobKind, job.data)
    // A job read back from a queue has its id (BullMQ types it optional for jobs not yet added).
    const idOf = (job: Job): string => {
      if (job.id === undefined) throw new Error(`a ${queue} job read from Redis has no id`)
      return job.id
    }
    const done: string[] = []
    const skipped: string[] = []
    /** Only BullMQ's refusal means "no longer failed"; a database error stops the command. */
    const moved = async (move: () => Promise<unknown>, job: Job) => {
      try {
        await move()
        return true
      } catch {
        // The job left the failed state meanwhile (retried by another operator, removed by hand).
        skipped.push(idOf(job))
        return false
      }
    }
    const apply = async (job: Job) => {
      if (verbName === 'retry') {
        await hooksOf(job)?.reopen(ctx)
        if (await moved(() => job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true }), job)) done.push(idOf(job))
      } else if (await moved(() => job.remove(), job)) {
        await hooksOf(job)?.abandon(ctx)
        done.push(idOf(job))
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
        for (const job of page.slice(0, total - done.length - skipped.length)) {
          await apply(job)
          ctx.progress(`queues ${verbName} ${queue}: ${done.length + skipped.length}/${total} jobs`)
        }
      }
    }
    const verb = verbName === 'retry' ? 'retried' : 'dropped'
    ctx.out(
      { queue, [verb]: done.length, ids: done, skipped },
      `${verb} ${done.length} failed job${done.length === 1 ? '' : 's'} of ${queue}${skipped.length ? ` (${skipped.length} had left the failed state)` : ''}`,
    )
  })
}

async function withQueues(ctx: CliContext, use: (queues: Queues) => Promise<void>): Promise<void> {
  const [{ Queues, redisConnection }, { describeConnectionError }] = await Promise.all([
    import('../../shared/platform/queues'),
    import('../../shared/platform/service-errors'),
  ])
  const connection = redisConnection(ctx.config, 'producer', { retryStrategy: () => null, lazyConnect: true })
  connection.on('error', () => {})
  try {
    await connection.connect()
  } catch (error) {
    connection.disconnect()
    throw new CliError(describeConnectionError('Redis', ctx.config.redisUrl, error, ctx.config.redisSentinel))
  }
  const queues = new Queues(connection, ctx.config.queuePrefix)
  try {
    await use(queues)
  } finally {
    await queues.close().catch(() => {})
    queues.connection.disconnect()
  }
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
  const cells = rows.map((r) =>
    [r.queue + (r.paused ? ' (paused)' : ''), r.waiting, r.active, r.delayed, r.failed, r.completed, r.processed_completed, r.processed_failed].map(String),
  )
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)))
  const line = (c: string[]) => c.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ')
  ctx.out({ prefix: ctx.config.queuePrefix, queues: rows }, [line(head), ...cells.map(line)].join('\n'))
}
