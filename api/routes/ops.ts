/** Operator endpoints (contract §6): liveness, readiness, Prometheus metrics. No API key. */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { renderDeliveryMetrics, renderQueueMetrics } from '../metrics'
import { renderProcessMetrics } from '../process-metrics'
import { processCrash } from '../../shared/platform/lifecycle'

const READY_TIMEOUT_MS = 1500

/** `crashOf` is the process's crash state; tests pass their own rather than crash the test runner. */
export function opsRoutes(deps: AppDeps, crashOf: () => string | undefined = processCrash) {
  return new Elysia({ name: 'routes.ops' })
    .get('/healthz', () => ({ status: 'ok' }), { detail: { operationId: 'healthz', tags: ['Operations'], summary: 'Process is alive', security: [] } })
    .get(
      '/readyz',
      async ({ set }) => {
        const [postgres, redis] = await Promise.all([
          check(() => deps.database.sql`select 1`),
          check(() => deps.redis.ping()),
        ])
        // After a crash the process drains and exits (shared/platform/lifecycle.ts): not ready,
        // whatever the stores say.
        const crash = crashOf()
        const ready = postgres === 'ok' && redis === 'ok' && crash === undefined
        set.status = ready ? 200 : 503
        return { status: ready ? 'ok' : 'unavailable', checks: { postgres, redis, ...(crash ? { process: 'crashed' as const } : {}) } }
      },
      { detail: { operationId: 'readyz', tags: ['Operations'], summary: 'PostgreSQL and Redis reachable and the process not going down after a crash (else 503)', security: [] } },
    )
    .get(
      '/metrics',
      async ({ set }) => {
        set.headers['content-type'] = 'text/plain; version=0.0.4; charset=utf-8'
        return deps.metrics.renderRequests() + renderProcessMetrics() + (deps.reads?.renderMetrics() ?? '') + (deps.catalogueCache?.renderMetrics() ?? '') + (await renderQueueMetrics(deps.queues).catch(() => '# queue metrics unavailable: Redis unreachable\n')) +
          (await renderDeliveryMetrics(deps).catch(() => '# delivery metrics unavailable: PostgreSQL or Redis unreachable\n'))
      },
      { detail: { operationId: 'metrics', tags: ['Operations'], summary: 'Prometheus metrics: requests, latency, queue depth and job outcomes', security: [] } },
    )
}

async function check(probe: () => Promise<unknown>): Promise<'ok' | 'unreachable'> {
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    await Promise.race([probe(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS)))])
    return 'ok'
  } catch {
    return 'unreachable'
  } finally {
    clearTimeout(timer)
  }
}
