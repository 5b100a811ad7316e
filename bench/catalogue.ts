/**
 * `bun run bench catalogue [--listings 1000000] [--businesses 10] [--reseed] [--requests 2000] [--clients 16]
 *   [--api-processes 1] [--seed 19] [--shapes 'no filter,circle'] [--cache-mb 0] [--port P]`
 * `bun run bench catalogue --detail [--rounds N] [--requests N] [--concurrency 1,4]`
 * `bun run bench catalogue --sizes 20000,1000000 --cache-mb 0 [--requests N]`: the goals of every
 * shape at both sizes in one run (20k listings of one business; 1M of 1,000 businesses, the
 * queried one ~100k, in BENCH_DATABASE_URL when set), measured side by side (sizesTable), one
 * table with p95(1M)/p95(20k).
 * `bun run bench catalogue --start --listings 20000 --businesses 1 --cache-mb 0 [--requests N]`: each
 * shape under `bun run start`'s supervisor with 1 API process and then with one per core
 * (bench/catalogue-start.ts): CPU per request of the API and of PostgreSQL, req/s and p95 of both.
 *
 * Seeds `--listings` published properties (default 1,000,000) over `--businesses` businesses into
 * its own database (DATABASE_URL's name + `_bench`, + `_<listings>` for another size, or
 * BENCH_DATABASE_URL), reusing it when already seeded with that shape. With 10 or more businesses
 * the queried one holds a tenth of the rows (100,000 of 1M: the shape of the catalogue goals and of contract §11 is
 * `--businesses 1000`); `--listings 20000 --businesses 1` is the 20k shape.
 *
 * By default it prints the goals table from one run: per query shape (VARIED_MIX, each request
 * with its own parameters) at `--clients` concurrent keep-alive connections, HTTP p50/p95/p99 and
 * req/s against Bun.serve(createApp) in child processes, the same statements through the driver
 * alone at the same concurrency and the ratio, the machine's bare Bun.serve rate under the same
 * load generator (bench/load.ts), the API's RSS at idle and after, and the load average.
 * The API answers repeated pages from its page cache (CATALOGUE_CACHE_MB): the last column is the
 * share of the run's requests it answered; `--cache-mb 0` measures every request's query work.
 * With BENCH_PROFILE_DIR set, each API process writes a CPU profile (`--cpu-prof-md`) there.
 *
 * `--detail` prints instead, for a fixed mix (the list's filters and five `q` shapes): the SQL time
 * of each list statement one call at a time (separate count vs a materialized one; a search's one bounded statement), p50/p95/p99 and
 * req/s over HTTP at `--concurrency`, and the EXPLAIN (ANALYZE, BUFFERS) plan of each query.
 * Rows are generated in SQL (generate_series); the catalogue is built by the same batch rebuild
 * as `bun run cli catalogue reindex`, so the seeding also measures that path.
 */
import postgres from 'postgres'
import { parseFlags } from './flags'
import { migrateDatabase } from '../db/migrate'
import { createDatabase } from '../db/client'
import { catalogueListSql, queryCataloguePage } from '../db/queries/catalogue/list'
import { defaultCountMode, type CountMode } from '../db/queries/catalogue/counts'
import { syncCatalogueSlice } from '../shared/listings/catalogue-rebuild'
import { insertKey } from '../db/queries/api-keys'
import { generateApiKey } from '../shared/access/api-key-format'
import { catalogueQueryOf, type ListParams } from '../shared/listings/catalogue-filters'
import { getConfig } from '../shared/platform/config'
import { availableParallelism } from 'node:os'
import { prepareRequest, type Http1Response } from './http1-client'
import { CITIES, QUERY_MIX, VARIED_MIX } from './catalogue-mix'
import { startScalingTable } from './catalogue-start'
import { closedLoopCalls, closedLoopHttp, load1, machineTicks, percentile, ratePerSecond, rssMb, seededRandom, stealPercent, type LoadRun } from './load'

const DEFAULT_LISTINGS = 1_000_000
const DEFAULT_BUSINESSES = 10
const BATCH = 5000

const toQueryString = (p: ListParams) => new URLSearchParams(Object.entries(p).map(([k, v]) => [k, String(v)] as [string, string])).toString()

/** One database per dataset size, so switching between them does not reseed the other. */
function benchUrl(listings: number): string {
  const config = getConfig()
  if (process.env.BENCH_DATABASE_URL && listings === DEFAULT_LISTINGS) return process.env.BENCH_DATABASE_URL
  const u = new URL(config.databaseUrl)
  u.pathname = `/${decodeURIComponent(u.pathname.slice(1))}_bench${listings === DEFAULT_LISTINGS ? '' : `_${listings}`}`
  return u.toString()
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
const fmt = (x: number) => x.toFixed(2).padStart(8)

async function seed(url: string, reseed: boolean, businesses: number, total: number): Promise<number[]> {
  const sql = postgres(url, { max: 2, onnotice: () => {} })
  try {
    const existing = await sql<{ id: number }[]>`select id from businesses where name like 'bench-%' order by id`
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from catalogue_entries`
    // A database seeded before the search words were part of the descriptions is seeded again.
    const [{ words }] = await sql<{ words: boolean }[]>`select exists (select 1 from properties where description like '%palomar%') as words`
    if (!reseed && existing.length === businesses && n === total && words) {
      console.log(`reusing the seeded bench database (${n.toLocaleString()} catalogue rows over ${existing.length} businesses)`)
      return existing.map((r) => r.id)
    }
    console.log(`seeding: truncating and generating ${total.toLocaleString()} properties over ${businesses} businesses in SQL …`)
    await sql`truncate catalogue_entries, property_images, properties, api_keys, businesses restart identity cascade`
    const ids = (await sql<{ id: number }[]>`insert into businesses (name) select 'bench-' || g from generate_series(1, ${businesses}) g returning id`).map(
      (r) => r.id,
    )
    const t0 = performance.now()
    const cities = JSON.stringify(CITIES)
    // With 10 or more businesses the first (the one queried) holds a tenth of the rows, drawn at
    // random so that no attribute derived from g is skewed in it; the rest share the others.
    const owner = businesses >= 10 ? `case when r.r9 < 0.1 then b.ids[1] else b.ids[2 + (g % ${businesses - 1})] end` : `b.ids[1 + (g % ${businesses})]`
    await sql.unsafe(`
      insert into properties (business_id, operations, type, subtype, title, description, price_sale, price_rent, price_transfer,
        location, area, bedrooms, bathrooms, characteristics, features, is_featured, status, published_at, created_at, updated_at)
      select ${owner},
        ops.o,
        t.type, t.sub,
        'Propiedad ' || g || ' en ' || c.name,
        '<p>Vivienda luminosa y reformada, cerca de transporte y servicios.'
          || case when r.r7 < 0.3 then ' Urbanización con <b>piscina</b> comunitaria.' else '' end
          || case when r.r7 >= 0.2 and r.r7 < 0.45 then ' Plaza de garaje incluida.' else '' end
          || case when r.r8 < 0.4 then ' Amplia terraza con vistas.' else '' end
          || case when g % 5003 = 1 then ' Antiguo palomar restaurado.' else '' end
          || ' Referencia ' || g || '.</p>',
        case when 'venta' = any(ops.o) then round((50000 + r.r1 * 950000)::numeric, -3)::float8 end,
        case when 'alquiler' = any(ops.o) then round((400 + r.r2 * 3600)::numeric, -1)::float8 end,
        case when 'traspaso' = any(ops.o) then round((20000 + r.r3 * 180000)::numeric, -3)::float8 end,
        jsonb_build_object('city', c.name, 'province', c.name, 'postal_code', lpad(((g % 52000) + 1000)::text, 5, '0'),
          'address', 'Calle Mayor ' || (g % 200 + 1) || ', ' || (g % 8 + 1) || 'º',
          'coordinates', jsonb_build_object('latitude', c.lat + (r.r4 - 0.5) * 0.18, 'longitude', c.lng + (r.r5 - 0.5) * 0.24),
          'visibility', case when g % 10 < 7 then 'public' when g % 10 < 9 then 'approximate' else 'hidden' end),
        jsonb_build_object('total', 40 + (g % 260)),
        (g / 7) % 7, 1 + (g / 5) % 3,
        case when 'alquiler' = any(ops.o) then jsonb_build_object('temporal_renting', g % 5 = 0, 'holiday_renting', g % 10 = 3, 'elevator', g % 2 = 0)
             else jsonb_build_object('elevator', g % 2 = 0) end,
        '[]'::jsonb,
        g % 20 = 0,
        case when g % 13 = 0 then 'reservada' else 'disponible' end,
        now(), now() - interval '400 days', now() - (r.r6 * interval '365 days')
      from generate_series(1, ${total}) g
      cross join (select array_agg(id order by id) ids from businesses where name like 'bench-%') b
      cross join lateral (select random() r1, random() r2, random() r3, random() r4, random() r5, random() r6,
                                 random() r7, random() r8, random() r9 where g > 0) r
      cross join lateral (select case when g % 20 < 12 then '{venta}'::text[] when g % 20 < 17 then '{alquiler}'::text[]
                                      when g % 20 < 18 then '{traspaso}'::text[] else '{venta,alquiler}'::text[] end o) ops
      cross join lateral (select (array['apartamento','casa','local','nave','almacenaje','oficina','terreno','aparcamiento','edificio'])
                                   [1 + (g / 3) % 9] as type) t0
      cross join lateral (select t0.type, case when g % 4 = 0 then null
                                 else (array['piso','chalet','local_comercial','nave_industrial','trastero','oficina','urbano','plaza_coche','hotel'])
                                        [1 + (g / 3) % 9] end sub) t
      cross join lateral (select x->>0 as name, (x->>1)::float8 lat, (x->>2)::float8 lng
                          from jsonb_array_elements('${cities.replace(/'/g, "''")}'::jsonb) with ordinality e(x, k)
                          where k = 1 + (g / 11) % ${CITIES.length}) c`)
    console.log(`  properties inserted in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    return ids
  } finally {
    await sql.end({ timeout: 2 })
  }
}

async function buildCatalogue(url: string, total: number): Promise<void> {
  const database = createDatabase(url, { max: 4 })
  try {
    const t0 = performance.now()
    // Two id ranges rebuilt side by side (2 cores): the same batch function as the CLI.
    const [{ max }] = await database.sql<{ max: number }[]>`select max(id)::int as max from properties`
    const half = Math.floor(max / 2)
    let done = 0
    const lane = async (from: number, to: number) => {
      let after = from
      for (;;) {
        const r = await syncCatalogueSlice(database.db, { afterId: after, batchSize: BATCH, beforeId: to })
        if (r.lastId === null) return
        after = r.lastId
        done += r.upserted
        if (done % 50000 < BATCH)
          process.stderr.write(`  catalogue ${done.toLocaleString()} / ${total.toLocaleString()} (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`)
      }
    }
    await Promise.all([lane(0, half + 1), lane(half, max + 1)])
    console.log(`  catalogue built in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    // As autovacuum would after a load this size (here it is off): the visibility map for
    // index-only scans, and the statistics (which a product rebuild gathers on its own).
    console.log('  VACUUM (ANALYZE) of the catalogue and properties after seeding, as autovacuum would')
    await database.sql`vacuum (analyze) catalogue_entries, catalogue_search, catalogue_counts, catalogue_price_counts, catalogue_geo_cells`
    await database.sql`analyze properties`
  } finally {
    await database.close()
  }
}

async function sqlTimings(url: string, businessId: number, rounds: number): Promise<Record<string, { p50: number; p95: number }>> {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  const kept: Record<string, { p50: number; p95: number }> = {}
  console.log(`\nSQL time of the list statement, measured directly (${rounds} runs each, ms):`)
  console.log(`${'query'.padEnd(28)}${'mode'.padEnd(10)}     p50      p95      p99    count`)
  try {
    for (const { name, params } of QUERY_MIX) {
      const { query } = catalogueQueryOf(businessId, params)
      // A search has one statement (bounded by contract §11); the other lists compare their two counts.
      const modes: CountMode[] = query.search !== undefined ? ['bounded'] : ['separate', 'materialized']
      for (const mode of modes) {
        const times: number[] = []
        let count = 0
        for (let i = 0; i < rounds; i++) {
          const t = performance.now()
          const r = await queryCataloguePage(sql, query, mode)
          times.push(performance.now() - t)
          count = r.count
        }
        times.sort((a, b) => a - b)
        // The mode the API uses for this query (a relevance page counts with a window) is what HTTP is compared with.
        if (mode === defaultCountMode(query)) kept[name] = { p50: pct(times, 50), p95: pct(times, 95) }
        console.log(`${name.padEnd(28)}${mode.padEnd(10)}${fmt(pct(times, 50))} ${fmt(pct(times, 95))} ${fmt(pct(times, 99))} ${String(count).padStart(8)}`)
      }
    }
    console.log('\nEXPLAIN (ANALYZE, BUFFERS) of each query (the count mode the API uses):')
    for (const { name, params } of QUERY_MIX) {
      const { query } = catalogueQueryOf(businessId, params)
      const statement = catalogueListSql(query)
      const plan = await sql.unsafe(`explain (analyze, buffers, costs off) ${statement.text}`, statement.params as never[])
      console.log(`\n--- ${name} ---`)
      for (const r of plan) console.log(r['QUERY PLAN'])
    }
    return kept
  } finally {
    await sql.end({ timeout: 2 })
  }
}

/** A `properties:read` key of the business, for the HTTP runs. */
async function readKey(url: string, businessId: number): Promise<string> {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  const key = generateApiKey()
  const { drizzle } = await import('drizzle-orm/postgres-js')
  await insertKey(drizzle(sql) as never, {
    businessId,
    keyId: key.keyId,
    secretHash: key.secretHash,
    name: 'bench',
    scopes: ['properties:read'],
    expiresAt: null,
  })
  await sql.end({ timeout: 2 })
  return key.apiKey
}

/** `count` server processes of `mode` on one port (SO_REUSEPORT), answering /healthz when ready. */
/**
 * The API's page-cache counters (catalogue_cache_requests_total on /metrics). With several
 * processes a scrape reaches one of them, so the share is only printed for one.
 */
async function cacheCounts(target: URL): Promise<{ hit: number; miss: number } | undefined> {
  const text = await (await fetch(new URL('/metrics', target))).text()
  const of = (result: string) => Number(new RegExp(`catalogue_cache_requests_total\\{result="${result}"\\} (\\d+)`).exec(text)?.[1])
  return text.includes('catalogue_cache_requests_total') ? { hit: of('hit'), miss: of('miss') } : undefined
}

function cacheShare(before: { hit: number; miss: number } | undefined, after: { hit: number; miss: number } | undefined, processes: number): string {
  if (!before || !after) return 'off'
  if (processes > 1) return '—'
  const [hit, miss] = [after.hit - before.hit, after.miss - before.miss]
  return `${((100 * hit) / Math.max(1, hit + miss)).toFixed(0)}%`
}

let cacheMb: string | undefined
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR

async function startServers(mode: 'serve' | 'serve-bare', url: string, port: number, count: number) {
  const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'error', ...(cacheMb === undefined ? {} : { CATALOGUE_CACHE_MB: cacheMb }) }
  // BENCH_PROFILE_DIR: each API process writes a CPU profile (markdown) there when stopped.
  const profile = PROFILE_DIR && mode === 'serve' ? ['--cpu-prof-md', `--cpu-prof-dir=${PROFILE_DIR}`] : []
  const children = Array.from({ length: count }, () =>
    Bun.spawn(['bun', ...profile, import.meta.path, `--${mode}`, '--port', String(port)], { env, stdout: 'pipe', stderr: 'inherit' }),
  )
  const stop = async () => {
    for (const child of children) child.kill()
    await Promise.all(children.map((c) => c.exited))
  }
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break
      } catch {}
      if (i > 400) throw new Error(`bench ${mode} server did not start`)
      await Bun.sleep(50)
    }
    // Every process answers before the run starts (each one binds when it is ready).
    await Bun.sleep(count > 1 ? 2000 : 0)
  } catch (error) {
    await stop()
    throw error
  }
  return { stop, rss: async () => (await Promise.all(children.map((c) => rssMb(c.pid)))).reduce((a, b) => a + b, 0) }
}

async function httpTimings(
  url: string,
  businessId: number,
  requests: number,
  concurrency: number[],
  port: number,
  sqlP: Record<string, { p50: number; p95: number }>,
) {
  const apiKey = await readKey(url, businessId)
  const key = { apiKey }
  const servers = await startServers('serve', url, port, 1)
  try {
    const base = `http://127.0.0.1:${port}`
    for (const c of concurrency) {
      console.log(`\nHTTP against Bun.serve(createApp) on port ${port} (${requests} requests per query, concurrency ${c}, ms):`)
      console.log(`${'query'.padEnd(28)}     p50      p95      p99    req/s    count   SQL p95  HTTP/SQL p50`)
      for (const { name, params } of QUERY_MIX) {
        const path = `${base}/v1/properties?${toQueryString(params)}`
        for (let i = 0; i < 10; i++) await (await fetch(path, { headers: { 'x-api-key': key.apiKey } })).arrayBuffer()
        const times: number[] = []
        let count = 0
        let next = 0
        const t0 = performance.now()
        await Promise.all(
          Array.from({ length: c }, async () => {
            while (next++ < requests) {
              const t = performance.now()
              const res = await fetch(path, { headers: { 'x-api-key': key.apiKey } })
              const text = await res.text()
              times.push(performance.now() - t)
              if (res.status !== 200) throw new Error(`${name}: ${res.status} ${text.slice(0, 300)}`)
              count = JSON.parse(text).count
            }
          }),
        )
        const wall = (performance.now() - t0) / 1000
        times.sort((a, b) => a - b)
        const s = sqlP[name]
        console.log(
          `${name.padEnd(28)}${fmt(pct(times, 50))} ${fmt(pct(times, 95))} ${fmt(pct(times, 99))} ${fmt(times.length / wall)} ` +
            `${String(count).padStart(8)} ${fmt(s.p95)}  ${fmt(pct(times, 50) / s.p50)}`,
        )
      }
    }
  } finally {
    await servers.stop()
  }
}

const TARGET_P95_MS = 20
const REFERENCE_BARE_RATE = 100_000

/**
 * The goals table, from one run: per shape of VARIED_MIX at `concurrency` clients, HTTP
 * p50/p95/p99 and req/s against the API in child processes, the same statements through the
 * driver alone at the same concurrency (a pool of `concurrency` connections in this process), the
 * machine's bare Bun.serve rate under the same load generator, and the API's RSS at idle and after.
 */
interface ShapeResult {
  p95: number
  rate: number
  sqlRate: number
  ratio: number
  failed: number
}

async function concurrencyTable(
  url: string,
  businessId: number,
  opts: { requests: number; concurrency: number; port: number; apiProcesses: number; seed: number; shapes?: string[] },
): Promise<{ goal: number; bareRate: number; results: Map<string, ShapeResult> }> {
  const { requests, concurrency, port } = opts
  const target = new URL(`http://127.0.0.1:${port}/`)
  const okStatus = (res: Http1Response) => (res.status === 200 ? undefined : `${res.status} ${res.body.slice(0, 200)}`)

  const bare = await startServers('serve-bare', url, port, opts.apiProcesses)
  const healthz = prepareRequest('GET', new URL('/healthz', target), {}, '')
  let bareRun: LoadRun
  try {
    await closedLoopHttp(target, concurrency, requests, () => healthz, okStatus)
    bareRun = await closedLoopHttp(target, concurrency, Math.max(requests, 20_000), () => healthz, okStatus)
  } finally {
    await bare.stop()
  }
  const bareRate = ratePerSecond(bareRun)
  // The goal is stated for a machine whose bare Bun.serve answers ~100k req/s and scales with that rate.
  const goal = TARGET_P95_MS * Math.max(1, REFERENCE_BARE_RATE / bareRate)
  console.log(
    `\nbare Bun.serve GET (${opts.apiProcesses} process(es), c=${concurrency}): ${bareRate.toFixed(0)} ` +
      `req/s, p99 ${percentile(bareRun.latencies, 99).toFixed(2)} ms (load ${load1()})`,
  )
  console.log(
    `p95 goal ${TARGET_P95_MS} ms at ${REFERENCE_BARE_RATE / 1000}k req/s bare → ${goal.toFixed(1)} ms on this machine; throughput goal HTTP ≥ 0.8× SQL alone`,
  )

  const apiKey = await readKey(url, businessId)
  const api = await startServers('serve', url, port, opts.apiProcesses)
  // The API's own pool options (unprepared statements, timeouts), sized to the concurrency.
  const alone = createDatabase(url, { max: concurrency })
  const rows: string[] = []
  const results = new Map<string, ShapeResult>()
  let met = 0
  const shapes = VARIED_MIX.filter((s) => !opts.shapes || opts.shapes.some((prefix) => s.name.startsWith(prefix)))
  try {
    const rssIdle = await api.rss()
    console.log(
      `\n${concurrency} clients, ${requests} requests per shape, every request with ` +
        `its own parameters (ms; SQL = the same statements through the driver alone):`,
    )
    console.log(`${'shape'.padEnd(24)}    p50     p95     p99    req/s  errors │ SQL req/s  SQL p95 │ HTTP/SQL │ p95 goal  load │ cache hits`)
    for (const { name, draw } of shapes) {
      const paramsOf = (seed: number) => {
        const r = seededRandom(seed)
        return Array.from({ length: requests }, () => draw(r))
      }
      const warm = paramsOf(opts.seed + 1)
      const drawn = paramsOf(opts.seed)
      const requestOf = (p: ListParams) => prepareRequest('GET', new URL(`/v1/properties?${toQueryString(p)}`, target), { 'x-api-key': apiKey }, '')
      await closedLoopHttp(target, concurrency, Math.min(200, requests), (i) => requestOf(warm[i]), okStatus)
      const hitsBefore = await cacheCounts(target)
      const http = await closedLoopHttp(target, concurrency, requests, (i) => requestOf(drawn[i]), okStatus)
      const hits = cacheShare(hitsBefore, await cacheCounts(target), opts.apiProcesses)
      const loadAfterHttp = load1()
      // Warmed like the HTTP run: the pool's connections opened and each backend's caches filled.
      const sqlCall = (params: ListParams[]) => async (i: number) => {
        await queryCataloguePage(alone.sql, catalogueQueryOf(businessId, params[i]).query)
        return undefined
      }
      await closedLoopCalls(concurrency, Math.min(200, requests), sqlCall(warm))
      const sqlRun = await closedLoopCalls(concurrency, requests, sqlCall(drawn))
      const p95 = percentile(http.latencies, 95)
      const ratio = ratePerSecond(http) / ratePerSecond(sqlRun)
      const ok = p95 <= goal && http.failed === 0 && ratio >= 0.8
      if (ok) met++
      results.set(name, { p95, rate: ratePerSecond(http), sqlRate: ratePerSecond(sqlRun), ratio, failed: http.failed })
      if (http.failed) console.log(`  ! ${name}: ${http.failed} failed, first: ${http.firstError}`)
      const httpRate = ratePerSecond(http).toFixed(0).padStart(8)
      const httpCols = `${fmt7(percentile(http.latencies, 50))} ${fmt7(p95)} ${fmt7(percentile(http.latencies, 99))} ${httpRate}`
      const sqlCols = `${ratePerSecond(sqlRun).toFixed(0).padStart(9)} ${fmt7(percentile(sqlRun.latencies, 95))}`
      const verdict = `${ratio.toFixed(2).padStart(7)}× │ ${p95 <= goal ? 'met    ' : 'NOT met'}  ${loadAfterHttp}`
      const row = `${name.padEnd(24)}${httpCols} ${String(http.failed).padStart(7)} │ ${sqlCols}  │ ${verdict} │ ${hits}`
      rows.push(row)
      console.log(row)
    }
    const rssAfter = await api.rss()
    console.log(
      `\nAPI RSS (${opts.apiProcesses} process(es)): ${rssIdle.toFixed(0)} MB idle, ${rssAfter.toFixed(0)} ` +
        `MB after the run (${(((rssAfter - rssIdle) / rssIdle) * 100).toFixed(1)}%)`,
    )
    console.log(
      `${met} of ${shapes.length} shapes meet both goals (p95 ≤ ${goal.toFixed(1)} ms, no errors, HTTP ≥ 0.8× ` +
        `SQL); bare Bun.serve ${bareRate.toFixed(0)} req/s; ${availableParallelism()} cores; load ${load1()}`,
    )
    return { goal, bareRate, results }
  } finally {
    await alone.close(2)
    await api.stop()
  }
}

const fmt7 = (x: number) => x.toFixed(2).padStart(7)

/** The reference: the least an HTTP server on this machine can do per request. */
function serveBare(port: number) {
  Bun.serve({ port, hostname: '127.0.0.1', reusePort: true, fetch: () => Response.json({ status: 'ok' }) })
}

async function serve(port: number) {
  const { createApp } = await import('../api/app')
  const { createApiDeps } = await import('../api/runtime')
  const deps = await createApiDeps(getConfig())
  const app = createApp(deps)
  Bun.serve({ port, hostname: '127.0.0.1', reusePort: true, fetch: (req) => app.handle(req) })
  // A clean exit on the bench's SIGTERM, so that a profiled process writes its profile.
  process.on('SIGTERM', () => process.exit(0))
}

/** The bench database of `listings` listings over `businesses`, seeded and built when it is not already; the queried business. */
async function prepareDataset(listings: number, businesses: number, reseed: boolean): Promise<{ url: string; businessId: number }> {
  if (!Number.isInteger(listings) || listings < 1000 || listings > 10_000_000) throw new Error('--listings must be an integer from 1000 to 10000000')
  if (!Number.isInteger(businesses) || businesses < 1 || businesses > 100_000) throw new Error('--businesses must be an integer from 1 to 100000')
  const url = benchUrl(listings)
  console.log(`\nbench database: ${new URL(url).pathname.slice(1)}`)
  await migrateDatabase(url)
  const ids = await seed(url, reseed, businesses, listings)
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from catalogue_entries`
  await sql.end()
  if (n !== listings) await buildCatalogue(url, listings)
  const businessId = ids[0]
  const counter = postgres(url, { max: 1, onnotice: () => {} })
  const [{ mine }] = await counter<{ mine: number }[]>`select count(*)::int as mine from catalogue_entries where business_id = ${businessId}`
  await counter.end()
  console.log(
    `queried business ${businessId}: ${mine.toLocaleString()} of ${listings.toLocaleString()} ` +
      `listings over ${businesses} business(es); ${availableParallelism()} cores; load ${load1()}`,
  )
  return { url, businessId }
}

const sizeLabel = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`)

/** Two runs of one shape and size as one: their requests, failures and time added, latencies merged. */
function mergeRuns(a: LoadRun, b: LoadRun): LoadRun {
  const latencies = new Float64Array(a.latencies.length + b.latencies.length)
  latencies.set(a.latencies)
  latencies.set(b.latencies, a.latencies.length)
  return { ok: a.ok + b.ok, failed: a.failed + b.failed, seconds: a.seconds + b.seconds, latencies: latencies.sort(), firstError: a.firstError ?? b.firstError }
}

interface SizeRun {
  listings: number
  businessId: number
  apiKey: string
  target: URL
  api: Awaited<ReturnType<typeof startServers>>
  alone: ReturnType<typeof createDatabase>
}

/**
 * The scale goal (p95 at the largest size ≤ 1.5× p95 at the smallest) from one run, with the two
 * sizes measured side by side: both APIs run at once, and each shape is measured in the order
 * small, large, large, small (half its requests each time), over HTTP and then through the driver
 * alone, so that a change of the machine's speed during the run (this VM's bare rate moved from
 * 106k to 54k req/s between two sizes measured one after the other) weighs on both sizes alike. The
 * bare Bun.serve rate is measured before each shape, and that shape's p95 goal scaled by it.
 */
async function sizesTable(
  datasets: { listings: number; url: string; businessId: number }[],
  opts: { requests: number; concurrency: number; port: number; seed: number; shapes?: string[] },
) {
  const { requests, concurrency, port } = opts
  const okStatus = (res: Http1Response) => (res.status === 200 ? undefined : `${res.status} ${res.body.slice(0, 200)}`)
  const bareTarget = new URL(`http://127.0.0.1:${port + datasets.length}/`)
  const bare = await startServers('serve-bare', datasets[0].url, port + datasets.length, 1)
  const healthz = prepareRequest('GET', new URL('/healthz', bareTarget), {}, '')
  const runs: SizeRun[] = []
  try {
    for (const [i, d] of datasets.entries()) {
      const apiKey = await readKey(d.url, d.businessId)
      const api = await startServers('serve', d.url, port + i, 1)
      runs.push({ ...d, apiKey, target: new URL(`http://127.0.0.1:${port + i}/`), api, alone: createDatabase(d.url, { max: concurrency }) })
    }
    const [small, large] = [runs[0], runs[runs.length - 1]]
    const shapes = VARIED_MIX.filter((s) => !opts.shapes || opts.shapes.some((prefix) => s.name.startsWith(prefix)))
    const half = Math.ceil(requests / 2)
    console.log(
      `\n${concurrency} clients, ${requests} requests per shape and size (two halves, in the order ${sizeLabel(small.listings)}, ` +
        `${sizeLabel(large.listings)}, ${sizeLabel(large.listings)}, ${sizeLabel(small.listings)}), every request with its own parameters; ` +
        'SQL = the same statements through the driver alone, in the same order; bare = Bun.serve measured just before the shape; ' +
        'steal = the share of the CPU time the hypervisor gave to other guests meanwhile.',
    )
    const header = runs.map((r) => `${sizeLabel(r.listings)} p95 ms | req/s | SQL req/s | HTTP/SQL`).join(' | ')
    console.log(`| shape | bare k req/s | p95 goal ms | ${header} | p95 ${sizeLabel(large.listings)}/${sizeLabel(small.listings)} | goals | steal |`)
    console.log(`|---|---|---|${runs.map(() => '---|---|---|---|').join('')}---|---|---|`)
    let met = 0
    for (const { name, draw } of shapes) {
      const ticks = machineTicks()
      await closedLoopHttp(bareTarget, concurrency, 2000, () => healthz, okStatus)
      const bareRate = ratePerSecond(await closedLoopHttp(bareTarget, concurrency, 20_000, () => healthz, okStatus))
      const goal = TARGET_P95_MS * Math.max(1, REFERENCE_BARE_RATE / bareRate)
      const paramsOf = (seed: number) => {
        const r = seededRandom(seed)
        return Array.from({ length: requests }, () => draw(r))
      }
      const warm = paramsOf(opts.seed + 1)
      const drawn = paramsOf(opts.seed)
      const httpRun = (run: SizeRun, params: ListParams[], from: number, count: number) =>
        closedLoopHttp(
          run.target,
          concurrency,
          count,
          (i) => prepareRequest('GET', new URL(`/v1/properties?${toQueryString(params[from + i])}`, run.target), { 'x-api-key': run.apiKey }, ''),
          okStatus,
        )
      const sqlRun = (run: SizeRun, params: ListParams[], from: number, count: number) =>
        closedLoopCalls(concurrency, count, async (i) => {
          await queryCataloguePage(run.alone.sql, catalogueQueryOf(run.businessId, params[from + i]).query)
          return undefined
        })
      for (const run of runs) {
        await httpRun(run, warm, 0, Math.min(200, requests))
        await sqlRun(run, warm, 0, Math.min(200, requests))
      }
      // Half the drawn requests in the first pass, the rest in the second (reversed order).
      const slice = (k: number): [number, number] => (k < runs.length ? [0, half] : [half, requests - half])
      const http = new Map<SizeRun, LoadRun[]>(runs.map((r) => [r, []]))
      const sql = new Map<SizeRun, LoadRun[]>(runs.map((r) => [r, []]))
      const order = [...runs, ...[...runs].reverse()]
      for (const [k, run] of order.entries()) http.get(run)!.push(await httpRun(run, drawn, ...slice(k)))
      for (const [k, run] of order.entries()) sql.get(run)!.push(await sqlRun(run, drawn, ...slice(k)))
      const results = runs.map((run) => {
        const h = mergeRuns(http.get(run)![0], http.get(run)![1])
        const s = mergeRuns(sql.get(run)![0], sql.get(run)![1])
        return { run, p95: percentile(h.latencies, 95), rate: ratePerSecond(h), sqlRate: ratePerSecond(s), failed: h.failed, firstError: h.firstError }
      })
      const misses: string[] = []
      for (const x of results) {
        const label = sizeLabel(x.run.listings)
        if (x.p95 > goal) misses.push(`p95 ${label}`)
        if (x.rate / x.sqlRate < 0.8) misses.push(`ratio ${label}`)
        if (x.failed) misses.push(`errors ${label} (${x.failed}, first: ${x.firstError})`)
      }
      const scale = results[results.length - 1].p95 / results[0].p95
      if (scale > 1.5) misses.push('scale')
      if (!misses.length) met++
      const cells = results.map((x) => `${x.p95.toFixed(1)} | ${x.rate.toFixed(0)} | ${x.sqlRate.toFixed(0)} | ${(x.rate / x.sqlRate).toFixed(2)}`)
      console.log(
        `| ${name} | ${(bareRate / 1000).toFixed(1)} | ${goal.toFixed(1)} | ${cells.join(' | ')} | ${scale.toFixed(2)} | ` +
          `${misses.length ? `NOT met: ${misses.join(', ')}` : 'met'} | ${stealPercent(ticks)} |`,
      )
    }
    console.log(`\n${met} of ${shapes.length} shapes meet every goal at both sizes; ${availableParallelism()} cores; load ${load1()}`)
  } finally {
    for (const run of runs) {
      await run.alone.close(2)
      await run.api.stop()
    }
    await bare.stop()
  }
}

const f = parseFlags(process.argv.slice(2))
const port = Number(f.flags.port ?? 3150)
if (f.flags['cache-mb'] !== undefined) cacheMb = String(f.flags['cache-mb'])
if (f.flags.serve) {
  await serve(port)
} else if (f.flags['serve-bare']) {
  serveBare(port)
} else {
  const runOpts = () => ({
    requests: Number(f.flags.requests ?? 2000),
    concurrency: Number(f.flags.clients ?? 16),
    port,
    apiProcesses: Number(f.flags['api-processes'] ?? 1),
    seed: Number(f.flags.seed ?? 19),
    shapes: f.flags.shapes ? String(f.flags.shapes).split(',') : undefined,
  })
  if (f.flags.sizes) {
    // 20k listings of one business and 1M of 1,000 businesses (the queried one ~100k), side by side.
    const sizes = String(f.flags.sizes).split(',').map(Number)
    if (sizes.length !== 2) throw new Error('--sizes takes two sizes, e.g. 20000,1000000')
    const datasets: { listings: number; url: string; businessId: number }[] = []
    for (const listings of sizes) datasets.push({ listings, ...(await prepareDataset(listings, listings >= 100_000 ? 1000 : 1, f.flags.reseed === true)) })
    const { requests, concurrency, seed, shapes } = runOpts()
    await sizesTable(datasets, { requests, concurrency, port, seed, shapes })
  } else {
    const listings = Number(f.flags.listings ?? DEFAULT_LISTINGS)
    const businesses = Number(f.flags.businesses ?? DEFAULT_BUSINESSES)
    const { url, businessId } = await prepareDataset(listings, businesses, f.flags.reseed === true)
    if (f.flags.detail) {
      // The per-statement view: both count modes one client at a time, EXPLAIN of each, and HTTP with the fixed mix.
      const sqlP = await sqlTimings(url, businessId, Number(f.flags.rounds ?? 50))
      const concurrency = String(f.flags.concurrency ?? '1,4')
        .split(',')
        .map(Number)
      await httpTimings(url, businessId, Number(f.flags.requests ?? 300), concurrency, port, sqlP)
    } else if (f.flags.start) {
      await startScalingTable(url, businessId, await readKey(url, businessId), { ...runOpts(), cacheMb })
    } else await concurrencyTable(url, businessId, runOpts())
  }
  process.exit(0)
}
