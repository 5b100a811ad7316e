/** `bun run start:api`: the HTTP tier alone. */
import { getConfig } from '../shared/platform/config'
import { assertPatchedDriver } from '../shared/platform/driver-patch'
import { exitWithStartupError, onShutdown, reportReady } from '../shared/platform/lifecycle'
import { createLogger } from '../shared/platform/logger'
import { startApi } from './server'

try {
  assertPatchedDriver()
  const config = getConfig()
  const logger = createLogger(config.logLevel, { process: 'api' })
  if (config.appSecretIsDefault) logger.warn('APP_SECRET is not set: using the development value (NODE_ENV=development or test only); set it in production')
  const api = await startApi(config, logger)
  onShutdown(logger, [{ name: 'api', run: () => api.close() }], config.shutdownTimeoutMs + 5000)
  reportReady()
} catch (error) {
  exitWithStartupError(error)
}
