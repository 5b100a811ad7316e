/**
 * `bun run bench catalogue [--reseed] [--businesses N] [--rounds N] [--requests N] [--concurrency 1,4] [--port P]`
 *
 * Seeds 1,000,000 published properties over 10 businesses (100,000 in the one queried; the
 * search goal of contract §11 is stated for `--businesses 1000`) into its own database
 * (DATABASE_URL's name + `_bench`, or BENCH_DATABASE_URL), reusing it when already seeded with
 * that shape; then, for a fixed query mix (issue 3, and `q` shapes from issue 18), reports:
 *  - SQL time of the list statement measured directly (separate count vs window count),
 *  - p50/p95/p99 and req/s over HTTP against a real Bun.serve of createApp in a child process,
 *  - the EXPLAIN (ANALYZE, BUFFERS) plan of each query.
 * Rows are generated in SQL (generate_series); the catalogue is built by the same batch rebuild
 * as `bun run cli catalogue reindex`, so the seeding also measures that path.
 */
import postgres from 'postgres'
import { parseFlags } from '../cli/io'
import { migrateDatabase } from '../db/migrate'
import { createDatabase } from '../db/client'
import { catalogueListSql, defaultCountMode, listCatalogue } from '../db/queries/catalogue'
import { rebuildCatalogueBatch } from '../shared/listings/catalogue-rebuild'
import { insertKey } from '../db/queries/api-keys'
import { generateApiKey } from '../shared/access/api-key-format'
import { catalogueQueryOf, type ListParams } from '../shared/listings/catalogue-filters'
import { getConfig } from '../shared/platform/config'

const TOTAL = 1_000_000
const DEFAULT_BUSINESSES = 10
const BATCH = 5000

const CITIES: [string, number, number][] = [
  ['Madrid', 40.4168, -3.7038], ['Barcelona', 41.3874, 2.1686], ['Valencia', 39.4699, -0.3763], ['Sevilla', 37.3891, -5.9845],
  ['Zaragoza', 41.6488, -0.8891], ['Málaga', 36.7213, -4.4214], ['Murcia', 37.9922, -1.1307], ['Palma', 39.5696, 2.6502],
  ['Bilbao', 43.263, -2.935], ['Alicante', 38.3452, -0.481], ['Córdoba', 37.8882, -4.7794], ['Valladolid', 41.6523, -4.7245],
  ['Vigo', 42.2406, -8.7207], ['Gijón', 43.5322, -5.6611], ['Granada', 37.1773, -3.5986], ['A Coruña', 43.3623, -8.4115],
  ['Vitoria', 42.8467, -2.6716], ['Elche', 38.2699, -0.7126], ['Oviedo', 43.3614, -5.8593], ['Cádiz', 36.5271, -6.2886],
]

export const QUERY_MIX: { name: string; params: ListParams }[] = [
  { name: 'no filter', params: {} },
  { name: 'operation+price range', params: { operation: 'venta', min_price: 200000, max_price: 400000 } },
  { name: 'city+type+min_bedrooms', params: { city: 'Valencia', type: 'apartamento', min_bedrooms: 2 } },
  { name: 'circle 2 km (Madrid)', params: { locations: JSON.stringify([{ geometry: { type: 'circle', center: { lat: 40.4168, lng: -3.7038 }, radius: 2000 } }]) } },
  {
    name: 'polygon (Barcelona centre)',
    params: { locations: JSON.stringify([{ geometry: { type: 'polygon', coordinates: [[41.37, 2.15], [41.37, 2.19], [41.40, 2.19], [41.40, 2.15]] } }]) },
  },
  { name: 'sort price_asc', params: { sort: 'price_asc' } },
  { name: 'offset 5000', params: { offset: 5000 } },
  // Search (contract §11): the seed puts piscina in ~30% of descriptions, garaje in ~25% (both in
  // ~10%), terraza in ~40%, and palomar in 1 of 5,003 listings.
  { name: 'q common word', params: { q: 'piscina' } },
  { name: 'q two words', params: { q: 'piscina garaje' } },
  { name: 'q rare word', params: { q: 'palomar' } },
  { name: 'q word+filters', params: { q: 'terraza', operation: 'venta', min_price: 200000, max_price: 400000, min_bedrooms: 2 } },
  {
    name: 'q polygon+word',
    params: { q: 'terraza', locations: JSON.stringify([{ geometry: { type: 'polygon', coordinates: [[41.37, 2.15], [41.37, 2.19], [41.40, 2.19], [41.40, 2.15]] } }]) },
  },
]

const toQueryString = (p: ListParams) => new URLSearchParams(Object.entries(p).map(([k, v]) => [k, String(v)] as [string, string])).toString()

function benchUrl(): string {
  const config = getConfig()
  if (process.env.BENCH_DATABASE_URL) return process.env.BENCH_DATABASE_URL
  const u = new URL(config.databaseUrl)
  u.pathname = `/${decodeURIComponent(u.pathname.slice(1))}_bench`
  return u.toString()
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
const fmt = (x: number) => x.toFixed(2).padStart(8)

async function seed(url: string, reseed: boolean, businesses: number): Promise<number[]> {
  const sql = postgres(url, { max: 2, onnotice: () => {} })
  try {
    const existing = await sql<{ id: number }[]>`select id from businesses where name like 'bench-%' order by id`
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from catalogue_entries`
    // A database seeded before the search words were part of the descriptions is seeded again.
    const [{ words }] = await sql<{ words: boolean }[]>`select exists (select 1 from properties where description like '%palomar%') as words`
    if (!reseed && existing.length === businesses && n === TOTAL && words) {
      console.log(`reusing the seeded bench database (${n.toLocaleString()} catalogue rows over ${existing.length} businesses)`)
      return existing.map((r) => r.id)
    }
    console.log('seeding: truncating and generating 1,000,000 properties in SQL …')
    await sql`truncate catalogue_entries, property_images, properties, api_keys, businesses restart identity cascade`
    const ids = (await sql<{ id: number }[]>`insert into businesses (name) select 'bench-' || g from generate_series(1, ${businesses}) g returning id`).map((r) => r.id)
    const t0 = performance.now()
    const cities = JSON.stringify(CITIES)
    await sql.unsafe(`
      insert into properties (business_id, operations, type, subtype, title, description, price_sale, price_rent, price_transfer,
        location, area, bedrooms, bathrooms, characteristics, features, is_featured, status, published_at, created_at, updated_at)
      select b.ids[1 + (g % ${businesses})],
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
      from generate_series(1, ${TOTAL}) g
      cross join (select array_agg(id order by id) ids from businesses where name like 'bench-%') b
      cross join lateral (select random() r1, random() r2, random() r3, random() r4, random() r5, random() r6, random() r7, random() r8 where g > 0) r
      cross join lateral (select case when g % 20 < 12 then '{venta}'::text[] when g % 20 < 17 then '{alquiler}'::text[]
                                      when g % 20 < 18 then '{traspaso}'::text[] else '{venta,alquiler}'::text[] end o) ops
      cross join lateral (select (array['apartamento','casa','local','nave','almacenaje','oficina','terreno','aparcamiento','edificio'])[1 + (g / 3) % 9] as type) t0
      cross join lateral (select t0.type, case when g % 4 = 0 then null else (array['piso','chalet','local_comercial','nave_industrial','trastero','oficina','urbano','plaza_coche','hotel'])[1 + (g / 3) % 9] end sub) t
      cross join lateral (select x->>0 as name, (x->>1)::float8 lat, (x->>2)::float8 lng from jsonb_array_elements('${cities.replace(/'/g, "''")}'::jsonb) with ordinality e(x, k) where k = 1 + (g / 11) % ${CITIES.length}) c`)
    console.log(`  properties inserted in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    return ids
  } finally {
    await sql.end({ timeout: 2 })
  }
}

async function buildCatalogue(url: string): Promise<void> {
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
        const r = await rebuildCatalogueBatch(database.db, { afterId: after, batchSize: BATCH, beforeId: to })
        if (r.lastId === null) return
        after = r.lastId
        done += r.upserted
        if (done % 50000 < BATCH) process.stderr.write(`  catalogue ${done.toLocaleString()} / ${TOTAL.toLocaleString()} (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`)
      }
    }
    await Promise.all([lane(0, half + 1), lane(half, max + 1)])
    console.log(`  catalogue built in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    await database.sql`vacuum analyze catalogue_entries`
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
      for (const mode of ['separate', 'window'] as const) {
        const times: number[] = []
        let count = 0
        for (let i = 0; i < rounds; i++) {
          const t = performance.now()
          const r = await listCatalogue(sql, query, mode)
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

async function httpTimings(url: string, businessId: number, requests: number, concurrency: number[], port: number, sqlP: Record<string, { p50: number; p95: number }>) {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  const key = generateApiKey()
  const { drizzle } = await import('drizzle-orm/postgres-js')
  await insertKey(drizzle(sql) as never, { businessId, keyId: key.keyId, secretHash: key.secretHash, name: 'bench', scopes: ['properties:read'], expiresAt: null })
  await sql.end({ timeout: 2 })

  const child = Bun.spawn(['bun', import.meta.path, '--serve', '--port', String(port)], {
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'error' },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  try {
    const base = `http://127.0.0.1:${port}`
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/healthz`)).ok) break
      } catch {}
      if (i > 200) throw new Error('bench server did not start')
      await Bun.sleep(50)
    }
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
        console.log(`${name.padEnd(28)}${fmt(pct(times, 50))} ${fmt(pct(times, 95))} ${fmt(pct(times, 99))} ${fmt(times.length / wall)} ${String(count).padStart(8)} ${fmt(s.p95)}  ${fmt(pct(times, 50) / s.p50)}`)
      }
    }
  } finally {
    child.kill()
    await child.exited
  }
}

async function serve(port: number) {
  const { createApp } = await import('../api/app')
  const { createApiDeps } = await import('../api/runtime')
  const deps = await createApiDeps(getConfig())
  const app = createApp(deps)
  Bun.serve({ port, hostname: '127.0.0.1', fetch: (req) => app.handle(req) })
}

const f = parseFlags(process.argv.slice(2))
const port = Number(f.flags.port ?? 3150)
if (f.flags.serve) {
  await serve(port)
} else {
  const url = benchUrl()
  console.log(`bench database: ${new URL(url).pathname.slice(1)}`)
  await migrateDatabase(url)
  const businesses = Number(f.flags.businesses ?? DEFAULT_BUSINESSES)
  if (!Number.isInteger(businesses) || businesses < 1 || businesses > 100_000) throw new Error('--businesses must be an integer from 1 to 100000')
  const ids = await seed(url, f.flags.reseed === true, businesses)
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from catalogue_entries`
  // Rows stored before migration 0011 have no search vector until rebuilt.
  const [{ unindexed }] = await sql<{ unindexed: boolean }[]>`select exists (select 1 from catalogue_entries where tsv is null) as unindexed`
  await sql.end()
  if (n !== TOTAL || unindexed) await buildCatalogue(url)
  const businessId = ids[0]
  const sqlP = await sqlTimings(url, businessId, Number(f.flags.rounds ?? 50))
  const concurrency = String(f.flags.concurrency ?? '1,4').split(',').map(Number)
  await httpTimings(url, businessId, Number(f.flags.requests ?? 300), concurrency, port, sqlP)
  process.exit(0)
}
