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

/** contract §16.4: what publishable keys and the browsers using them meet. */
export interface AccessCounters {
  /** Authenticated /v1 requests by the key's kind. */
  requests: { secret: number; publishable: number }
  /** Publishable-key requests refused for their Origin (403 origin-not-allowed). */
  originRefusals: number
  /** 429s by the limit that refused. */
  rateLimited: { 'per-ip': number; 'per-key': number }
  /** Requests answered as accepted because `_gotcha` was filled in (nothing stored). */
  honeypotHits: number
}

export class Metrics {
  private requests = new Map<string, Series>()
  readonly access: AccessCounters = { requests: { secret: 0, publishable: 0 }, originRefusals: 0, rateLimited: { 'per-ip': 0, 'per-key': 0 }, honeypotHits: 0 }

  constructor() {
    watchEventLoopLag()
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method}\u0000${route}\u0000${status}`
    let s = this.requests.get(key)
    if (!s) {
      s = { count: 0, sum: 0, buckets: BUCKETS.map(() => 0) }
      this.requests.set(key, s)
    }
    s.count++
    s.sum += seconds
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]) s.buckets[i]++
  }

  renderRequests(): string {
    const lines = ['# HELP http_requests_total HTTP requests by route and status.', '# TYPE http_requests_total counter']
    const hist = ['# HELP http_request_duration_seconds HTTP request latency by route and status.', '# TYPE http_request_duration_seconds histogram']
    for (const [key, s] of this.requests) {
      const [method, route, status] = key.split('\u0000')
      const labels = `method="${method}",route="${escapeLabel(route)}",status="${status}"`
      lines.push(`http_requests_total{${labels}} ${s.count}`)
      for (const [i, b] of BUCKETS.entries()) hist.push(`http_request_duration_seconds_bucket{${labels},le="${b}"} ${s.buckets[i]}`)
      hist.push(`http_request_duration_seconds_bucket{${labels},le="+Inf"} ${s.count}`)
      hist.push(`http_request_duration_seconds_sum{${labels}} ${s.sum}`)
      hist.push(`http_request_duration_seconds_count{${labels}} ${s.count}`)
    }
    return [...lines, ...hist].join('\n') + '\n'
  }
}

/** The access counters, and the limiter's own figures (checks, answers from memory, fallbacks while Redis failed). */
export function renderAccessMetrics(a: AccessCounters, limiter: { checks: number; blockedInMemory: number; fallbacks: number }): string {
  return (
    [
      '# HELP api_key_requests_total Authenticated /v1 requests by the kind of API key.',
      '# TYPE api_key_requests_total counter',
      `api_key_requests_total{kind="secret"} ${a.requests.secret}`,
      `api_key_requests_total{kind="publishable"} ${a.requests.publishable}`,
      "# HELP cors_origin_refusals_total Publishable-key requests refused because their Origin is not one of the key's origins.",
      '# TYPE cors_origin_refusals_total counter',
      `cors_origin_refusals_total ${a.originRefusals}`,
      '# HELP rate_limited_total Publishable-key requests answered 429, by the limit that refused them.',
      '# TYPE rate_limited_total counter',
      `rate_limited_total{limit="per-ip"} ${a.rateLimited['per-ip']}`,
      `rate_limited_total{limit="per-key"} ${a.rateLimited['per-key']}`,
      '# HELP honeypot_hits_total Requests with the _gotcha field filled in: answered as accepted, nothing stored.',
      '# TYPE honeypot_hits_total counter',
      `honeypot_hits_total ${a.honeypotHits}`,
      '# HELP rate_limit_checks_total Publishable-key requests whose limits were checked (in Redis, or from memory when already over).',
      '# TYPE rate_limit_checks_total counter',
      `rate_limit_checks_total ${limiter.checks}`,
      '# HELP rate_limit_memory_answers_total Limit checks answered from memory: the client or key was already over its limit in this window.',
      '# TYPE rate_limit_memory_answers_total counter',
      `rate_limit_memory_answers_total ${limiter.blockedInMemory}`,
      '# HELP rate_limit_fallbacks_total Limit counter calls made in process memory because Redis failed or was too slow (limits then hold per process).',
      '# TYPE rate_limit_fallbacks_total counter',
      `rate_limit_fallbacks_total ${limiter.fallbacks}`,
    ].join('\n') + '\n'
  )
}

export function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

/**
 * Queue depth per state, finished-job totals per outcome, and whether the queue is paused; one
 * Redis round trip per figure, so a scrape costs the same whatever the queue length.
 */
export async function renderQueueMetrics(queues: Queues): Promise<string> {
  const figures = await queueFigures(queues)
  const depth = ['# HELP queue_jobs Jobs per queue and state.', '# TYPE queue_jobs gauge']
  const outcomes = [
    '# HELP queue_jobs_processed_total Jobs finished per queue and outcome (each failed attempt counts once).',
    '# TYPE queue_jobs_processed_total counter',
  ]
  const paused = ['# HELP queue_paused 1 when the queue is paused.', '# TYPE queue_paused gauge']
  // The alert for an unreachable database seen by the workers: ingest jobs wait instead of
  // failing, so `queue_jobs{state="failed"}` stays 0 during an outage and this counter rises.
  const waits = [
    '# HELP queue_job_unavailable_waits_total Times a job was put back to wait because PostgreSQL was unreachable (it kept its attempts).',
    '# TYPE queue_job_unavailable_waits_total counter',
  ]
  for (const f of figures) {
    const q = escapeLabel(f.queue)
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
    '# HELP webhook_delivery_attempts_total Webhook delivery attempts by outcome (delivered; ' +
      'retrying: failed, another attempt follows; failed: failed, the retry window is over).',
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
