/**
 * `bun run start` (after migrating): the single-machine default, API and every worker in one
 * process. This file stands above both tiers so api/ and worker/ never import each other.
 */
import { startApi } from './api/server'
import { getConfig } from './shared/platform/config'
import { assertPatchedDriver } from './shared/platform/driver-patch'
import { exitWithStartupError, onShutdown } from './shared/platform/lifecycle'
import { createLogger } from './shared/platform/logger'
import { startWorkers } from './worker/runtime'

try {
  assertPatchedDriver()
  const config = getConfig()
  const logger = createLogger(config.logLevel)
  if (config.appSecretIsDefault) logger.warn('APP_SECRET is not set: using the development value (NODE_ENV=development or test only); set it in production')
  const workers = await startWorkers(config, logger.child({ process: 'worker' }))
  const api = await startApi(config, logger.child({ process: 'api' }))
  // API first (no new work arrives), then the workers drain.
  onShutdown(logger, [
    { name: 'api', run: () => api.close() },
    { name: 'workers', run: () => workers.close() },
  ], 2 * config.shutdownTimeoutMs + 5000)
} catch (error) {
  exitWithStartupError(error)
}
