/**
 * Process entry helpers: one clear line on a start-up failure, and an ordered, bounded
 * shutdown on SIGTERM/SIGINT (contract §7) or on a crash (an unhandled rejection or uncaught
 * exception), after which the supervisor restarts the process.
 */
import { flushPending, type Logger } from './logger'

export function exitWithStartupError(error: unknown): never {
  const e = error as Error
  // Start-up errors (config, unreachable services) are already one readable sentence.
  console.error(
    e?.name === 'ConfigError' || e?.name === 'StartupError' || e?.name === 'WorkerStartupError' ? e.message : `start-up failed: ${e?.message ?? String(error)}`,
  )
  process.exit(1)
}

/** The start-up line for a PORT another process holds (the API, and the supervisor's check before it starts any). */
export function portInUseMessage(port: number, shared: boolean): string {
  return shared
    ? `port ${port} is already in use by a process that does not share it (SO_REUSEPORT): stop it or choose another PORT`
    : `port ${port} is already in use (another instance of this service, or another program): stop it, choose another PORT, or set REUSE_PORT=1 to ` +
        `share the port with other instances on purpose`
}

/**
 * Tells the supervisor (main.ts) over its IPC channel that this process serves; without one (run
 * on its own, in a container) nothing happens. A process that exits before saying so failed to
 * start, which the supervisor does not retry.
 */
export function reportReady(): void {
  // Its start-up lines ("api listening") come before the supervisor's "process ready".
  flushPending()
  process.send?.({ type: 'ready' })
  // The supervisor is gone (even SIGKILLed): drain and exit rather than serve unsupervised.
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'))
}

let crashed: string | undefined
/**
 * Why this process is going down after a crash (undefined while healthy): `/readyz` answers 503
 * from then on, so nothing routes new work to a process whose state can no longer be trusted.
 */
export const processCrash = (): string | undefined => crashed

export function onShutdown(logger: Logger, steps: { name: string; run: () => Promise<void> }[], hardLimitMs: number): void {
  let stopping = false
  let exitCode = 0
  const stop = async (reason: string) => {
    if (stopping) return
    stopping = true
    logger.info('shutting down', { signal: reason })
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
    process.exit(exitCode)
  }
  // A crash leaves state that can no longer be trusted, but in-flight requests and jobs were
  // accepted: drain them within the same bound as SIGTERM, then exit non-zero so the supervisor
  // restarts the process. Bun's default (exit at once) cut them off; a handler that only logged
  // would leave a process that looks alive and serves nothing.
  const crash = (kind: 'unhandled rejection' | 'uncaught exception', error: unknown) => {
    exitCode = 1
    crashed ??= kind
    logger.error(`${kind}; draining and exiting`, {
      kind,
      error: error instanceof Error ? error : { value: String(error) },
      already_stopping: stopping,
      uptime_s: Math.round(process.uptime()),
      pid: process.pid,
    })
    void stop(kind)
  }
  process.on('unhandledRejection', (reason) => crash('unhandled rejection', reason))
  process.on('uncaughtException', (error) => crash('uncaught exception', error))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}
