/**
 * Prometheus text exposition (contract §6) without a client library: request counts and a
 * latency histogram by route and status, kept in process; queue figures are read from Redis at
 * scrape time so every replica reports the same queue depth.
 */
import { watchEventLoopLag } from './process-metrics'
import { queueFigures } from '../shared/platform/queue-stats'
import type { Queues } from '../shared/platform/queues'
import type { Services } from '../shared/platform/services'
import { deliveryFigures } from '../shared/webhooks/metrics'
import { LATENCY_BUCKETS_S } from '../shared/webhooks/stats'

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

interface Series {
  count: number
  sum: number
  buckets: number[]
}

export class Metrics {
  private requests = new Map<string, Series>()

  constructor() {
    watchEventLoopLag()
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method}\u0000${route}\u0000${status}`
    let s = this.requests.get(key)
    if (!s) this.requests.set(key, (s = { count: 0, sum: 0, buckets: BUCKETS.map(() => 0) }))
    s.count++
    s.sum += seconds
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]) s.buckets[i]++
  }

  renderRequests(): string {
    const lines = [
      '# HELP http_requests_total HTTP requests by route and status.',
      '# TYPE http_requests_total counter',
    ]
    const hist = ['# HELP http_request_duration_seconds HTTP request latency by route and status.', '# TYPE http_request_duration_seconds histogram']
    for (const [key, s] of this.requests) {
      const [method, route, status] = key.split('\u0000')
      const labels = `method="${method}",route="${escape(route)}",status="${status}"`
      lines.push(`http_requests_total{${labels}} ${s.count}`)
      BUCKETS.forEach((b, i) => hist.push(`http_request_duration_seconds_bucket{${labels},le="${b}"} ${s.buckets[i]}`))
      hist.push(`http_request_duration_seconds_bucket{${labels},le="+Inf"} ${s.count}`)
      hist.push(`http_request_duration_seconds_sum{${labels}} ${s.sum}`)
      hist.push(`http_request_duration_seconds_count{${labels}} ${s.count}`)
    }
    return [...lines, ...hist].join('\n') + '\n'
  }
}

export function escape(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

/**
 * Queue depth per state, finished-job totals per outcome, and whether the queue is paused; one
 * Redis round trip per figure, so a scrape costs the same whatever the queue length.
 */
export async function renderQueueMetrics(queues: Queues): Promise<string> {
  const figures = await queueFigures(queues)
  const depth = ['# HELP queue_jobs Jobs per queue and state.', '# TYPE queue_jobs gauge']
  const outcomes = ['# HELP queue_jobs_processed_total Jobs finished per queue and outcome (each failed attempt counts once).', '# TYPE queue_jobs_processed_total counter']
  const paused = ['# HELP queue_paused 1 when the queue is paused.', '# TYPE queue_paused gauge']
  // The alert for an unreachable database seen by the workers: ingest jobs wait instead of
  // failing, so `queue_jobs{state="failed"}` stays 0 during an outage and this counter rises.
  const waits = [
    '# HELP queue_job_unavailable_waits_total Times a job was put back to wait because PostgreSQL was unreachable (it kept its attempts).',
    '# TYPE queue_job_unavailable_waits_total counter',
  ]
  for (const f of figures) {
    const q = escape(f.queue)
    for (const [state, n] of Object.entries(f.counts)) depth.push(`queue_jobs{queue="${q}",state="${state}"} ${n}`)
    for (const [outcome, n] of Object.entries(f.processed)) outcomes.push(`queue_jobs_processed_total{queue="${q}",outcome="${outcome}"} ${n}`)
    paused.push(`queue_paused{queue="${q}"} ${f.paused ? 1 : 0}`)
    waits.push(`queue_job_unavailable_waits_total{queue="${q}"} ${f.waits.unavailable}`)
  }
  return [...depth, ...outcomes, ...paused, ...waits].join('\n') + '\n'
}

/**
 * Webhook and outreach delivery figures (shared/webhooks/metrics.ts): attempts by outcome, an
 * attempt-latency histogram, and the oldest undelivered event's age per delivering queue.
 */
export async function renderDeliveryMetrics(deps: Pick<Services, 'database' | 'queues'>): Promise<string> {
  const f = await deliveryFigures(deps)
  const lines = [
    '# HELP webhook_delivery_attempts_total Webhook delivery attempts by outcome (delivered; retrying: failed, another attempt follows; failed: failed, the retry window is over).',
    '# TYPE webhook_delivery_attempts_total counter',
    ...Object.entries(f.outcomes).map(([o, n]) => `webhook_delivery_attempts_total{outcome="${o}"} ${n}`),
    '# HELP webhook_delivery_duration_seconds Webhook delivery attempt latency (request sent to answer or failure).',
    '# TYPE webhook_delivery_duration_seconds histogram',
    ...LATENCY_BUCKETS_S.map((b, i) => `webhook_delivery_duration_seconds_bucket{le="${b}"} ${f.latency.buckets[i]}`),
    `webhook_delivery_duration_seconds_bucket{le="+Inf"} ${f.latency.count}`,
    `webhook_delivery_duration_seconds_sum ${f.latency.sumSeconds}`,
    `webhook_delivery_duration_seconds_count ${f.latency.count}`,
    '# HELP delivery_oldest_undelivered_event_age_seconds Age of the oldest event not yet delivered, per delivering queue (0 when none waits).',
    '# TYPE delivery_oldest_undelivered_event_age_seconds gauge',
    ...Object.entries(f.oldestUndeliveredSeconds).map(([q, s]) => `delivery_oldest_undelivered_event_age_seconds{queue="${q}"} ${s.toFixed(3)}`),
  ]
  return lines.join('\n') + '\n'
}
