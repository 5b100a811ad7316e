/** Operator endpoints (contract §6): liveness, readiness, Prometheus metrics. No API key. */
import { Elysia } from 'elysia'
import { Type as T } from '@sinclair/typebox'
import type { AppDeps } from '../deps'
import { renderAccessMetrics, renderDeliveryMetrics, renderQueueMetrics } from '../metrics'
import { renderProcessMetrics } from '../process-metrics'
import { processCrash } from '../../shared/platform/lifecycle'

const READY_TIMEOUT_MS = 1500

const Check = T.Union([T.Literal('ok'), T.Literal('unreachable')])
const Readiness = T.Object(
  {
    status: T.Union([T.Literal('ok'), T.Literal('unavailable')]),
    checks: T.Object({
      postgres: Check,
      redis: Check,
      process: T.Optional(T.Literal('crashed', { description: 'Present after a crash: the process drains and exits.' })),
    }),
  },
  {
    title: 'Readiness',
    examples: [
      { status: 'ok', checks: { postgres: 'ok', redis: 'ok' } },
      { status: 'unavailable', checks: { postgres: 'ok', redis: 'unreachable' } },
    ],
  },
)
const Liveness = T.Object({ status: T.Literal('ok') }, { title: 'Liveness' })

const METRICS_RESPONSES = {
  200: {
    description:
      'Prometheus text exposition format 0.0.4: request counts and latency histograms by route and status, key kinds, origin ' +
      'refusals, 429s and honeypot hits, queue depth and job outcomes per queue, webhook delivery figures, process figures.',
    content: {
      'text/plain': {
        schema: {
          type: 'string',
          examples: [
            '# HELP http_requests_total HTTP requests by route and status.\n# TYPE http_requests_total ' +
              'counter\nhttp_requests_total{method="GET",route="/v1/me",status="200"} 3\n',
          ],
        },
      },
    },
  },
}

/** `crashOf` is the process's crash state; tests pass their own rather than crash the test runner. */
export function opsRoutes(deps: AppDeps, crashOf: () => string | undefined = processCrash) {
  return new Elysia({ name: 'routes.ops' })
    .get('/healthz', () => ({ status: 'ok' as const }), {
      response: { 200: Liveness },
      detail: { operationId: 'healthz', tags: ['Operations'], summary: 'Process is alive', security: [] },
    })
    .get(
      '/readyz',
      async ({ set }) => {
        const [postgres, redis] = await Promise.all([check(() => deps.database.sql`select 1`), check(() => deps.redis.ping())])
        // After a crash the process drains and exits (shared/platform/lifecycle.ts): not ready,
        // whatever the stores say.
        const crash = crashOf()
        const ready = postgres === 'ok' && redis === 'ok' && crash === undefined
        set.status = ready ? 200 : 503
        return { status: ready ? ('ok' as const) : ('unavailable' as const), checks: { postgres, redis, ...(crash ? { process: 'crashed' as const } : {}) } }
      },
      {
        response: { 200: Readiness, 503: Readiness },
        detail: {
          operationId: 'readyz',
          tags: ['Operations'],
          summary: 'PostgreSQL and Redis reachable and the process not going down after a crash (else 503)',
          security: [],
        },
      },
    )
    .get(
      '/metrics',
      async ({ set }) => {
        set.headers['content-type'] = 'text/plain; version=0.0.4; charset=utf-8'
        return (
          deps.metrics.renderRequests() +
          renderAccessMetrics(deps.metrics.access, deps.rateLimits.stats) +
          renderProcessMetrics() +
          (deps.reads?.renderMetrics() ?? '') +
          (deps.catalogueCache?.renderMetrics() ?? '') +
          (await renderQueueMetrics(deps.queues).catch(() => '# queue metrics unavailable: Redis unreachable\n')) +
          (await renderDeliveryMetrics(deps).catch(() => '# delivery metrics unavailable: PostgreSQL or Redis unreachable\n'))
        )
      },
      {
        detail: {
          operationId: 'metrics',
          tags: ['Operations'],
          summary: 'Prometheus metrics: requests, latency, queue depth and job outcomes',
          security: [],
          responses: METRICS_RESPONSES,
        } as Record<string, unknown>,
      },
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
