/** Serves createApp on Bun.serve and drains it on shutdown (contract §7). */
import http from 'node:http'
import type { Config } from '../shared/platform/config'
import { portInUseMessage } from '../shared/platform/lifecycle'
import type { Logger } from '../shared/platform/logger'
import { createApp } from './app'
import { problemBody, problemResponse } from './problems'
import { rawPathRouting } from './raw-path'
import { closeApiDeps, createApiDeps, StartupError } from './runtime'

/**
 * Bun never refuses a body itself: its own 413 comes before authentication, as a bare answer
 * without problem+json, X-Request-Id or Cache-Control. Every body the API reads has its own limit,
 * counted as it arrives: JSON 1 MiB (request-body.ts), a local upload its signed size
 * (routes/local-storage.ts); a body left unread closes the connection (below).
 */
const MAX_REQUEST_BODY = Number.MAX_SAFE_INTEGER

/**
 * Request line and headers together. Bun's default of 16 KiB refused a `locations` query with a
 * 1,000-vertex polygon (about 72 KB URL-encoded at full double precision). Past this limit Bun's
 * parser answers a bare 431 and closes the connection: no hook of Bun.serve sees that request
 * (its `error` handler is not called), so the limit is documented (docs/limits.md) instead.
 */
export const MAX_HEADER_BYTES = 256 * 1024

/**
 * Bun's HTTP parser reads its limit from node:http's `maxHeaderSize`, which the
 * `--max-http-header-size` flag sets; assigning it is the same setting made by the process itself,
 * so every way of starting the API (scripts, compose, tests) gets it. A larger flag is kept.
 */
function raiseHeaderLimit(logger: Logger): void {
  if (http.maxHeaderSize >= MAX_HEADER_BYTES) return
  try {
    ;(http as { maxHeaderSize: number }).maxHeaderSize = MAX_HEADER_BYTES
  } catch {}
  if (http.maxHeaderSize < MAX_HEADER_BYTES) {
    logger.warn('could not raise the HTTP header limit; start bun with --max-http-header-size', { limit: http.maxHeaderSize, wanted: MAX_HEADER_BYTES })
  }
}

/**
 * A body the API did not read to its end (refused before reading: 401, 403, 413, a route that
 * takes none) would otherwise be drained by Bun byte by byte, however large it was declared.
 */
function bodyLeftUnread(request: Request, status: number): boolean {
  return request.body !== null && (!request.bodyUsed || status === 413)
}

type ServeOptions = Omit<Parameters<typeof Bun.serve>[0], 'port' | 'hostname' | 'reusePort'>

/**
 * Several API processes on one machine may share the port (Linux SO_REUSEPORT spreads the
 * connections: how one host uses all its cores, docs/operations.md "Processes and scaling"), but only with REUSE_PORT=1 on
 * purpose. Without it the port is bound alone, so a stale instance still holding it (or another
 * program) stops start-up with one line instead of quietly taking part of the traffic.
 */
function listen(config: Config, options: ServeOptions): ReturnType<typeof Bun.serve> {
  try {
    return Bun.serve({ ...options, port: config.port, hostname: '0.0.0.0', reusePort: config.reusePort } as Parameters<typeof Bun.serve>[0])
  } catch (error) {
    if ((error as { code?: string }).code !== 'EADDRINUSE') throw error
    throw new StartupError(portInUseMessage(config.port, config.reusePort))
  }
}

async function listenOrClose(deps: Awaited<ReturnType<typeof createApiDeps>>, options: ServeOptions): Promise<ReturnType<typeof Bun.serve>> {
  try {
    return listen(deps.config, options)
  } catch (error) {
    await closeApiDeps(deps)
    throw error
  }
}

/** What METRICS_PORT answers: this process's own operator endpoints, whichever process PORT reaches. */
const OPS_PATHS = ['/metrics', '/healthz', '/readyz']

/** METRICS_PORT's listener (config.ts): bound alone, so two processes never share one process's view. */
async function listenOps(
  deps: Awaited<ReturnType<typeof createApiDeps>>,
  serve: (request: Request) => Promise<Response>,
): Promise<ReturnType<typeof Bun.serve> | undefined> {
  const port = deps.config.metricsPort
  if (port === undefined) return undefined
  try {
    return Bun.serve({
      port,
      hostname: '0.0.0.0',
      routes: Object.fromEntries(OPS_PATHS.map((path) => [path, serve])),
      fetch: () => {
        const id = crypto.randomUUID()
        return problemResponse(404, problemBody('not_found', `METRICS_PORT serves ${OPS_PATHS.join(', ')} only; the API is on PORT`, id), id)
      },
    })
  } catch (error) {
    if ((error as { code?: string }).code !== 'EADDRINUSE') throw error
    throw new StartupError(`METRICS_PORT ${port} is already in use: choose another METRICS_PORT (API process i of \`bun run start\` takes METRICS_PORT + i)`)
  }
}

export interface RunningApi {
  port: number
  close(timeoutMs?: number): Promise<void>
}

/** How long a draining API waits without a new request before it closes its connections. */
const QUIET_MS = 100
/** The most a draining API keeps accepting requests on its open connections before it stops listening. */
const GRACE_MS = 1000

export async function startApi(config: Config, logger: Logger): Promise<RunningApi> {
  const deps = await createApiDeps(config, logger)
  const app = createApp(deps)
  raiseHeaderLimit(logger)
  // Requests being handled, counted here because `server.stop(false)` can resolve while a
  // request that arrived on a kept-alive connection is still running; closing the stores then
  // failed it with a 503 (fault harness, scenario d).
  let inflight = 0
  let draining = false
  let lastStartedAt = 0
  let onIdle: (() => void) | undefined
  const settled = () => {
    if (--inflight === 0) onIdle?.()
  }
  const serve = async (request: Request) => {
    inflight++
    lastStartedAt = performance.now()
    try {
      const response = await app.handle(request)
      // Draining: tell keep-alive clients to open their next request elsewhere.
      if (draining || bodyLeftUnread(request, response.status)) response.headers.set('connection', 'close')
      return response
    } finally {
      settled()
    }
  }
  const server = await listenOrClose(deps, {
    maxRequestBodySize: MAX_REQUEST_BODY,
    idleTimeout: 30,
    ...rawPathRouting(app, serve),
  })
  const opsServer = await listenOps(deps, serve).catch(async (error) => {
    server.stop(true)
    await closeApiDeps(deps)
    throw error
  })
  // Asked only for a publishable key's per-address limit (contract §16.4), never per request.
  deps.peerAddress = (request) => server.requestIP(request)?.address
  logger.info('api listening', { port: server.port, url: config.publicUrl, ...(opsServer ? { metrics_port: opsServer.port } : {}) })
  return {
    port: server.port ?? config.port,
    async close(timeoutMs = config.shutdownTimeoutMs) {
      // Stop accepting, let in-flight requests finish (bounded), then close the stores.
      let timer: ReturnType<typeof setTimeout> | undefined
      const until = performance.now() + timeoutMs
      const idle = () => (inflight === 0 ? Promise.resolve() : new Promise<void>((r) => (onIdle = r)))
      draining = true
      // stop(false) closes at once every connection Bun holds idle, and one whose next request
      // is still unread in its socket is then reset (3 ECONNRESET of 40 once in CI, the process
      // busy). So first keep serving, each answer with `connection: close`, until no request has
      // started for QUIET_MS since the signal, within GRACE_MS.
      const signalledAt = performance.now()
      const graceEnd = Math.min(until, signalledAt + GRACE_MS)
      while (performance.now() < graceEnd && performance.now() - Math.max(lastStartedAt, signalledAt) < QUIET_MS) await Bun.sleep(10)
      const drained = await Promise.race([
        server
          .stop(false)
          .then(idle)
          .then(() => true),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), Math.max(0, until - performance.now())))),
      ])
      clearTimeout(timer)
      // A request its client wrote on a kept-alive connection just before the signal may still
      // be unread in the socket: keep the connections open until none has started for
      // QUIET_MS (each is answered with `connection: close`), within the same bound.
      while (drained && performance.now() < until && (inflight > 0 || performance.now() - lastStartedAt < QUIET_MS)) await Bun.sleep(10)
      if (!drained) logger.warn('in-flight requests did not finish in time; closing', { timeout_ms: timeoutMs })
      // An idle kept-alive connection can still carry one more request after stop(false) has
      // resolved (one create failed with 503 once the stores closed: fault harness, scenario d).
      // Close the connections, then let whatever slipped in finish before the stores close.
      await server.stop(true)
      opsServer?.stop(true)
      await Promise.race([idle(), new Promise<void>((r) => (timer = setTimeout(r, 1000)))])
      clearTimeout(timer)
      await closeApiDeps(deps)
    },
  }
}
