/** Operator endpoints (contract §6): liveness, readiness, Prometheus metrics. No API key. */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { renderQueueMetrics } from '../metrics'

const READY_TIMEOUT_MS = 1500

export function opsRoutes(deps: AppDeps) {
  return new Elysia({ name: 'routes.ops' })
    .get('/healthz', () => ({ status: 'ok' }), { detail: { operationId: 'healthz', tags: ['Operations'], summary: 'Process is alive', security: [] } })
    .get(
      '/readyz',
      async ({ set }) => {
        const [postgres, redis] = await Promise.all([
          check(() => deps.database.sql`select 1`),
          check(() => deps.redis.ping()),
        ])
        const ready = postgres === 'ok' && redis === 'ok'
        set.status = ready ? 200 : 503
        return { status: ready ? 'ok' : 'unavailable', checks: { postgres, redis } }
      },
      { detail: { operationId: 'readyz', tags: ['Operations'], summary: 'PostgreSQL and Redis reachable (else 503)', security: [] } },
    )
    .get(
      '/metrics',
      async ({ set }) => {
        set.headers['content-type'] = 'text/plain; version=0.0.4; charset=utf-8'
        return deps.metrics.renderRequests() + (await renderQueueMetrics(deps.queues).catch(() => '# queue metrics unavailable: Redis unreachable\n'))
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
