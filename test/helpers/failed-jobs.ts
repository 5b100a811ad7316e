/**
 * Puts real failed jobs into a test's queues: a BullMQ worker on the test's prefix whose
 * processor refuses every job permanently, as a broken downstream would.
 */
import { UnrecoverableError, Worker } from 'bullmq'
import type { QueueName } from '../../shared/platform/queue-names'
import { redisConnection } from '../../shared/platform/queues'
import type { TestContext } from './context'
import { eventually } from './context'

export async function makeFailedJobs(ctx: TestContext, queue: QueueName, n: number): Promise<string[]> {
  const q = ctx.deps.queues.get(queue)
  const jobs = await q.addBulk(Array.from({ length: n }, (_, i) => ({ name: 'test.fail', data: { i }, opts: { attempts: 3, removeOnFail: false } })))
  const connection = redisConnection(ctx.config.redisUrl, 'worker')
  const worker = new Worker(
    queue,
    async () => {
      throw new UnrecoverableError('downstream refused the job')
    },
    { connection, prefix: ctx.config.queuePrefix, metrics: { maxDataPoints: 10 } },
  )
  try {
    await eventually(async () => (await q.getFailedCount()) >= n, { what: `${n} failed jobs in ${queue}` })
  } finally {
    await worker.close()
    connection.disconnect()
  }
  return jobs.map((j) => j.id!)
}
