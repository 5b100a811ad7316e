/**
 * Delivery figures kept in Redis (one hash per queue prefix), so every API replica's /metrics
 * reports the same totals whichever worker made the attempts: attempts by outcome and a
 * latency histogram of the attempts (request sent → answer or failure).
 */
import type IORedis from 'ioredis'

export const LATENCY_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
export const ATTEMPT_OUTCOMES = ['delivered', 'retrying', 'failed'] as const
export type AttemptOutcomeLabel = (typeof ATTEMPT_OUTCOMES)[number]

const keyOf = (prefix: string) => `${prefix}:webhook-delivery:stats`

export async function recordDeliveryStats(redis: IORedis, prefix: string, attempts: { outcome: AttemptOutcomeLabel; latencyMs: number }[]): Promise<void> {
  if (attempts.length === 0) return
  const fields = new Map<string, number>()
  const add = (f: string, n: number) => fields.set(f, (fields.get(f) ?? 0) + n)
  for (const a of attempts) {
    add(`outcome:${a.outcome}`, 1)
    add('latency_count', 1)
    add('latency_sum_ms', a.latencyMs)
    for (const b of LATENCY_BUCKETS_S) if (a.latencyMs <= b * 1000) add(`latency_le:${b}`, 1)
  }
  const pipeline = redis.pipeline()
  for (const [f, n] of fields) pipeline.hincrby(keyOf(prefix), f, n)
  await pipeline.exec()
}

export interface DeliveryStats {
  outcomes: Record<AttemptOutcomeLabel, number>
  latency: { count: number; sumSeconds: number; buckets: number[] }
}

export async function readDeliveryStats(redis: IORedis, prefix: string): Promise<DeliveryStats> {
  const raw = await redis.hgetall(keyOf(prefix))
  const n = (f: string) => Number(raw[f] ?? 0)
  return {
    outcomes: Object.fromEntries(ATTEMPT_OUTCOMES.map((o) => [o, n(`outcome:${o}`)])) as Record<AttemptOutcomeLabel, number>,
    latency: { count: n('latency_count'), sumSeconds: n('latency_sum_ms') / 1000, buckets: LATENCY_BUCKETS_S.map((b) => n(`latency_le:${b}`)) },
  }
}
