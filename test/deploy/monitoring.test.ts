/**
 * compose's `monitoring` profile: every metric the committed Grafana dashboard queries is one the
 * service's /metrics really serves (scraped from a running API process here), the panels use the provisioned
 * Prometheus datasource, and Prometheus scrapes the API's /metrics.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createTestContext, eventually, seedBusiness, type TestContext } from '../helpers/context'
import { freePort, ROOT } from '../helpers/processes'

interface Panel {
  type: string
  title: string
  datasource?: { uid: string }
  targets?: { expr: string; datasource?: { uid: string } }[]
}

const dashboard = (await Bun.file(join(ROOT, 'monitoring/grafana/dashboards/property-lead-api.json')).json()) as { panels: Panel[] }
const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })))

/**
 * The metric names of a PromQL expression: what is left once label matchers, ranges, strings,
 * numbers, grouping clauses, function calls and operators are taken out.
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\b[a-z_]+\s*\(/g, '(')
    .replace(/\boffset\s+\S+/g, ' ')
    .replace(/\b(?:and|or|unless|bool)\b/g, ' ')
    .replace(/\b\d+(?:\.\d+)?\b/g, ' ')
  return [...new Set(stripped.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? [])]
}

let ctx: TestContext
let api: ReturnType<typeof Bun.spawn>
let exposition: string

beforeAll(async () => {
  const port = await freePort()
  const queuePrefix = `monitoring-${port}`
  ctx = await createTestContext({ QUEUE_PREFIX: queuePrefix })
  api = Bun.spawn(['bun', 'run', 'api/index.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), QUEUE_PREFIX: queuePrefix, LOG_LEVEL: 'silent' },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  const base = `http://127.0.0.1:${port}`
  await eventually(
    () =>
      fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      ),
    { timeoutMs: 20_000, what: 'the API answering /readyz' },
  )
  // A request of each kind the request series are labelled by, so they have samples.
  const business = await seedBusiness(ctx)
  expect((await fetch(`${base}/v1/me`, { headers: { 'x-api-key': business.apiKey } })).status).toBe(200)
  expect((await fetch(`${base}/v1/me`)).status).toBe(401)
  const res = await fetch(`${base}/metrics`)
  expect(res.status).toBe(200)
  exposition = await res.text()
}, 30_000)
afterAll(async () => {
  api.kill('SIGTERM')
  await api.exited
  await ctx.close()
})

describe('Grafana dashboard', () => {
  test('covers request rate and latency by route, queue depth and job outcomes, delivery latency', () => {
    const all = queries.map((q) => q.expr).join('\n')
    expect(all).toMatch(/sum by \([^)]*route[^)]*\) \(rate\(http_requests_total/)
    expect(all).toMatch(/histogram_quantile\(0\.95, sum by \(route, le\) \(rate\(http_request_duration_seconds_bucket/)
    expect(all).toMatch(/queue_jobs\{state=~"waiting/)
    expect(all).toContain('queue_jobs_processed_total')
    expect(all).toMatch(/histogram_quantile\(0\.95, max by \(le\) \(rate\(webhook_delivery_duration_seconds_bucket/)
  })

  test('the name parser finds names, not functions, labels or keywords', () => {
    expect(metricNames('histogram_quantile(0.95, sum by (route, le) (rate(a_bucket{x="y"}[5m]))) / on (q) b_total offset 5m')).toEqual(['a_bucket', 'b_total'])
  })

  test('every metric a query names is served by /metrics, with samples', () => {
    const missing: string[] = []
    for (const { panel, expr } of queries) {
      const names = metricNames(expr)
      expect(names.length, `${panel}: ${expr}`).toBeGreaterThan(0)
      for (const name of names) {
        if (!new RegExp(`^${name}[{ ]`, 'm').test(exposition)) missing.push(`${panel}: ${name}`)
      }
    }
    expect(missing).toEqual([])
  })

  test('every panel reads the provisioned Prometheus datasource', async () => {
    const provisioned = Bun.YAML.parse(await Bun.file(join(ROOT, 'monitoring/grafana/provisioning/datasources/prometheus.yml')).text()) as {
      datasources: { uid: string; url: string }[]
    }
    const uid = provisioned.datasources[0].uid
    expect(provisioned.datasources[0].url).toBe('http://prometheus:9090')
    for (const p of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect(p.datasource?.uid, p.title).toBe(uid)
      for (const t of p.targets ?? []) expect(t.datasource?.uid, p.title).toBe(uid)
    }
  })
})

test('Prometheus scrapes /metrics of the api service on its port', async () => {
  const prometheus = Bun.YAML.parse(await Bun.file(join(ROOT, 'monitoring/prometheus.yml')).text()) as {
    scrape_configs: { metrics_path: string; dns_sd_configs: { names: string[]; port: number }[] }[]
  }
  const compose = Bun.YAML.parse(await Bun.file(join(ROOT, 'compose.yaml')).text()) as { services: Record<string, { ports?: string[] }> }
  const [job] = prometheus.scrape_configs
  expect(job.metrics_path).toBe('/metrics')
  expect(job.dns_sd_configs[0].names).toEqual(['api'])
  expect(compose.services.api.ports?.[0]).toBe(`3000:${job.dns_sd_configs[0].port}`)
})
