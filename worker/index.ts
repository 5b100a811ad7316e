/** `bun run start:worker`: the queue consumers picked by WORKER_QUEUES (default: all). */
import { getConfig } from '../shared/platform/config'
import { assertPatchedDriver } from '../shared/platform/driver-patch'
import { exitWithStartupError, onShutdown, reportReady } from '../shared/platform/lifecycle'
import { createLogger } from '../shared/platform/logger'
import { startWorkers } from './runtime'

try {
  assertPatchedDriver()
  const config = getConfig()
  const logger = createLogger(config.logLevel, { process: 'worker' })
  if (config.appSecretIsDefault) logger.warn('APP_SECRET is not set: using the development value (NODE_ENV=development or test only); set it in production')
  const workers = await startWorkers(config, logger)
  onShutdown(logger, [{ name: 'workers', run: () => workers.close() }], config.shutdownTimeoutMs + 5000)
  reportReady()
} catch (error) {
  exitWithStartupError(error)
}
