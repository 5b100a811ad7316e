/**
 * Process entry helpers: one clear line on a start-up failure, and an ordered, bounded
 * shutdown on SIGTERM/SIGINT (contract §7).
 */
import type { Logger } from './logger'

export function exitWithStartupError(error: unknown): never {
  const e = error as Error
  // Start-up errors (config, unreachable services) are already one readable sentence.
  console.error(e?.name === 'ConfigError' || e?.name === 'StartupError' || e?.name === 'WorkerStartupError' ? e.message : `start-up failed: ${e?.message ?? String(error)}`)
  process.exit(1)
}

function installCrashHandlers(logger: Logger): void {
  process.on('uncaughtException', (error) => {
    logger.error('uncaught exception; exiting', { error })
    process.exit(1)
  })
}

export function onShutdown(logger: Logger, steps: { name: string; run: () => Promise<void> }[], hardLimitMs: number): void {
  installCrashHandlers(logger)
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info('shutting down', { signal })
    // The last line of defence: a step that hangs past every bound still lets the process exit.
    setTimeout(() => {
      logger.error('shutdown exceeded its bound; exiting', { limit_ms: hardLimitMs })
      process.exit(1)
    }, hardLimitMs).unref()
    for (const step of steps) {
      try {
        await step.run()
        logger.info('stopped', { component: step.name })
      } catch (error) {
        logger.error('stop failed', { component: step.name, error: (error as Error).message })
      }
    }
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}
