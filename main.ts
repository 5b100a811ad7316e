/**
 * `bun run start` (after migrating): the single-machine default. A supervisor runs API_PROCESSES
 * API processes sharing PORT (SO_REUSEPORT; default one per core, one event loop each) and
 * WORKER_PROCESSES worker processes (default 1, each consuming WORKER_QUEUES); it restarts a
 * process that dies and stops them in order on SIGTERM or SIGINT (docs/operations.md, "Processes
 * and scaling"). It stands above both tiers, naming their entry files only, so api/ and worker/
 * never import each other; a container runs one of them directly instead.
 */
import { createServer } from 'node:net'
import { resolve } from 'node:path'
import { environmentWith, getConfig, type Config } from './shared/platform/config'
import { exitWithStartupError, portInUseMessage } from './shared/platform/lifecycle'
import { createLogger } from './shared/platform/logger'
import { Supervisor, type ChildSpec } from './shared/platform/supervisor'

class StartupError extends Error {
  override name = 'StartupError'
}

/**
 * The children share PORT on purpose, so the API's own guard (a taken port stops start-up unless
 * REUSE_PORT=1) is made here, once, before any of them binds it.
 */
function checkPortFree(port: number): Promise<void> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer()
    probe.once('error', (error: Error & { code?: string }) => reject(error.code === 'EADDRINUSE' ? new StartupError(portInUseMessage(port, false)) : error))
    probe.listen({ port, host: '0.0.0.0', exclusive: true }, () => probe.close(() => resolvePort()))
  })
}

function childSpecs(config: Config): ChildSpec[] {
  const bun = process.execPath
  const apis = Array.from(
    { length: config.apiProcesses },
    (_, index): ChildSpec => ({
      group: 'api',
      index,
      command: [bun, resolve(import.meta.dir, 'api/index.ts')],
      env: environmentWith({
        ...(config.apiProcesses > 1 ? { REUSE_PORT: '1' } : {}),
        ...(config.metricsPort !== undefined ? { METRICS_PORT: String(config.metricsPort + index) } : {}),
      }),
    }),
  )
  const workers = Array.from(
    { length: config.workerProcesses },
    (_, index): ChildSpec => ({
      group: 'worker',
      index,
      command: [bun, resolve(import.meta.dir, 'worker/index.ts')],
      env: environmentWith({}),
      nice: config.workerNice,
    }),
  )
  // API first in the stop order: no new work arrives while the workers drain.
  return [...apis, ...workers]
}

try {
  const config = getConfig()
  const logger = createLogger(config.logLevel, { process: 'supervisor' })
  if (config.apiProcesses > 0 && !config.reusePort) await checkPortFree(config.port)
  const supervisor = new Supervisor(childSpecs(config), {
    cwd: import.meta.dir,
    logger,
    // Each child drains within SHUTDOWN_TIMEOUT_MS and ends itself 5 s later at most.
    stopTimeoutMs: config.shutdownTimeoutMs + 10_000,
  })
  const stop = (signal: string) => {
    logger.info('shutting down', { signal })
    void supervisor.stop()
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  const ready = await supervisor.start().then(
    () => true,
    () => false,
  )
  if (ready) {
    const metrics =
      config.metricsPort === undefined
        ? 'one process per connection (set METRICS_PORT for one view per process)'
        : `METRICS_PORT ${config.metricsPort}..${config.metricsPort + Math.max(0, config.apiProcesses - 1)}`
    logger.info('ready', { api_processes: config.apiProcesses, worker_processes: config.workerProcesses, port: config.port, metrics, pids: supervisor.pids() })
  }
  process.exit(await supervisor.done)
} catch (error) {
  exitWithStartupError(error)
}
