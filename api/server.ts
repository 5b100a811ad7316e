/** Serves createApp on Bun.serve and drains it on shutdown (contract §7). */
import type { Config } from '../shared/platform/config'
import type { Logger } from '../shared/platform/logger'
import { createApp } from './app'
import { closeApiDeps, createApiDeps } from './runtime'

/** Larger than any JSON body (1 MiB, checked per request) and any local upload (25 MiB, contract §5). */
const MAX_REQUEST_BODY = 27 * 1024 * 1024

export interface RunningApi {
  port: number
  close(timeoutMs?: number): Promise<void>
}

export async function startApi(config: Config, logger: Logger): Promise<RunningApi> {
  const deps = await createApiDeps(config, logger)
  const app = createApp(deps)
  // Requests being handled, counted here because `server.stop(false)` can resolve while a
  // request that arrived on a kept-alive connection is still running; closing the stores then
  // failed it with a 503 (fault harness, scenario d).
  let inflight = 0
  let draining = false
  let onIdle: (() => void) | undefined
  const settled = () => {
    if (--inflight === 0) onIdle?.()
  }
  const server = Bun.serve({
    port: config.port,
    hostname: '0.0.0.0',
    // Several API processes on one machine may share the port (Linux SO_REUSEPORT spreads the
    // connections): how one host uses all its cores (README, scaling).
    reusePort: true,
    maxRequestBodySize: MAX_REQUEST_BODY,
    idleTimeout: 30,
    fetch: async (request) => {
      inflight++
      try {
        const response = await app.handle(request)
        // Draining: tell keep-alive clients to open their next request elsewhere.
        if (draining) response.headers.set('connection', 'close')
        return response
      } finally {
        settled()
      }
    },
  })
  logger.info('api listening', { port: server.port, url: config.publicUrl })
  return {
    port: server.port ?? config.port,
    async close(timeoutMs = config.shutdownTimeoutMs) {
      // Stop accepting, let in-flight requests finish (bounded), then close the stores.
      let timer: ReturnType<typeof setTimeout> | undefined
      const idle = () => (inflight === 0 ? Promise.resolve() : new Promise<void>((r) => (onIdle = r)))
      draining = true
      const drained = await Promise.race([
        server.stop(false).then(idle).then(() => true),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs))),
      ])
      clearTimeout(timer)
      if (!drained) logger.warn('in-flight requests did not finish in time; closing', { timeout_ms: timeoutMs })
      // An idle kept-alive connection can still carry one more request after stop(false) has
      // resolved (one create failed with 503 once the stores closed: fault harness, scenario d).
      // Close the connections, then let whatever slipped in finish before the stores close.
      await server.stop(true)
      await Promise.race([idle(), new Promise<void>((r) => (timer = setTimeout(r, 1000)))])
      clearTimeout(timer)
      await closeApiDeps(deps)
    },
  }
}
