/**
 * The worker containers' health check (compose.yaml): exit 0 when a worker process of this host
 * is connected to Redis for every queue of WORKER_QUEUES, else 1 with one line naming what is
 * missing. A worker has no HTTP port; BullMQ names each worker's Redis connection after its
 * queue and the worker's name, which worker/runtime.ts makes `<host>:<pid>`.
 */
import { hostname } from 'node:os'
import { getConfig } from '../shared/platform/config'
import { Queues, redisConnection } from '../shared/platform/queues'

const config = getConfig()
const connection = redisConnection(config, 'producer', { retryStrategy: () => null })
connection.on('error', () => {})
const queues = new Queues(connection, config.queuePrefix)
const marker = `:w:${hostname()}:`

try {
  const missing: string[] = []
  for (const name of config.workerQueues) {
    const workers = await queues.get(name).getWorkers()
    if (!workers.some((w) => String(w.rawname).includes(marker))) missing.push(name)
  }
  if (missing.length) {
    console.error(`no worker of ${hostname()} is connected for: ${missing.join(', ')}`)
    process.exitCode = 1
  }
} catch (error) {
  console.error(`Redis is not reachable: ${(error as Error).message}`)
  process.exitCode = 1
} finally {
  await queues.close().catch(() => {})
  connection.disconnect()
}
