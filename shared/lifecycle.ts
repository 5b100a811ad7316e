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

/**
 * postgres.js 3.4.9 can write to a connection whose socket is already gone (a small write
 * scheduled with setImmediate, or one reached from the data handler, after the server closed
 * the connection): an uncatchable TypeError that took an API down during a PostgreSQL restart
 * (fault harness, scenario c). Upstream: porsager/postgres#1066, #1208 (fix in #1209, not
 * released). The query it belonged to was already failed with CONNECTION_CLOSED, so the
 * process carries on; any other uncaught error still ends it, now with a log line.
 */
export function isPostgresClosedSocketWrite(error: unknown): boolean {
  const e = error as Error
  return e instanceof TypeError && typeof e.stack === 'string' && /\bnextWrite\b/.test(e.stack) && /postgres[\\/]src[\\/]connection\.js/.test(e.stack)
}

function installCrashHandlers(logger: Logger): void {
  process.on('uncaughtException', (error) => {
    if (isPostgresClosedSocketWrite(error)) {
      logger.warn('postgres.js wrote to a closed connection; its query had already failed (porsager/postgres#1208)', { error: error.message })
      return
    }
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
