/**
 * `bun run bench feed [--listings 100000] [--conditional 5000]`
 *
 * The Kyero portal feed of one business with `listings` published listings (10 images each),
 * served by the API in its own process (`bun run start:api`, its own database: DATABASE_URL's
 * name + `_bench_feed`, seeded once and reused). Prints the download rate of the whole feed and
 * the API's RSS before, at its peak during, and after the download; then the latency of
 * conditional requests answered 304 (If-None-Match), one at a time and 16 at a time.
 * Goals: ≥ 20 MB/s, RSS growth < 50 MB during the download, 304 p95 ≤ 5 ms.
 */
import postgres from 'postgres'
import { parseFlags } from './flags'
import { Http1Pool, prepareRequest } from './http1-client'
import { createDatabase } from '../db/client'
import { migrateDatabase } from '../db/migrate'
import { createBusiness } from '../shared/access/accounts'
import { createFeed } from '../shared/feeds/operations'
import { createProperty, publishProperty } from '../shared/listings/operations'
import { getConfig } from '../shared/platform/config'
import { freePort } from '../test/helpers/processes'

const flags = parseFlags(process.argv.slice(2)).flags
const LISTINGS = Number(flags.listings ?? 100_000)
const CONDITIONAL = Number(flags.conditional ?? 5000)

const config = getConfig()
const dbUrl = new URL(config.databaseUrl)
dbUrl.pathname = `/${decodeURIComponent(dbUrl.pathname.slice(1))}_bench_feed`
const url = dbUrl.toString()
await migrateDatabase(url)
const database = createDatabase(url, { max: 4 })
const deps = { config: { ...config, databaseUrl: url }, database }

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

async function seed(): Promise<number> {
  const name = `bench-feed-${LISTINGS}`
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    const [existing] = await sql<{ id: number; n: number }[]>`
      select b.id, (select count(*)::int from catalogue_entries c where c.business_id = b.id) as n from businesses b where b.name = ${name}`
    if (existing?.n === LISTINGS) {
      console.log(`reusing the seeded business ${existing.id} (${LISTINGS.toLocaleString()} published listings)`)
      return existing.id
    }
    if (existing) await sql`delete from businesses where id = ${existing.id}`
    const business = await createBusiness(deps, name)
    // One listing made by the real operations is the template; the rest are its copies.
    const templateId = await deps.database.db.transaction((tx) =>
      createProperty(tx, business.id, {
        operations: ['venta', 'alquiler'],
        type: 'apartamento',
        subtype: 'atico',
        title: 'Ático con terraza y vistas al mar',
        description: '<p>Luminoso ático reformado con terraza de 40 m², cocina equipada y plaza de garaje.</p>'.repeat(4),
        pricing: { sale: 320000, rent: 1400 },
        location: {
          city: 'Valencia',
          province: 'Valencia',
          postal_code: '46004',
          address: 'Calle de Colón 12',
          coordinates: { latitude: 39.4699, longitude: -0.3763 },
          visibility: 'approximate',
        },
        area: { total: 120, built: 110 },
        bedrooms: 3,
        bathrooms: 2,
        characteristics: {
          energy_certificate: 'C',
          elevator: true,
          translations: { en: { title: 'Penthouse', description: 'Bright penthouse with a sea-view terrace.' } },
        },
        features: [
          { key: 'terraza', label: 'Terraza', value: true },
          { key: 'garaje', label: 'Garaje', value: true },
        ],
      }),
    )
    await publishProperty(deps, business.id, templateId)
    const images = JSON.stringify(
      Array.from({ length: 10 }, (_, i) => ({
        id: crypto.randomUUID(),
        url: `https://cdn.example.com/images/${crypto.randomUUID().replace(/-/g, '')}.jpg`,
        order: i + 1,
        is_primary: i === 0,
        title: '',
      })),
    )
    await sql`update catalogue_entries set doc = jsonb_set(doc::jsonb, '{images}', ${images}::text::jsonb)::json where property_id = ${templateId}`
    const batch = 10_000
    for (let done = 1; done < LISTINGS; done += batch) {
      const n = Math.min(batch, LISTINGS - done)
      await sql.begin(async (tx) => {
        await tx`
          with copies as (
            insert into properties (business_id, operations, type, subtype, title, description, price_sale, price_rent, location, area, bedrooms, bathrooms,
              characteristics, features, published_at)
            select business_id, operations, type, subtype, title || ' ' || g, description, price_sale + g, price_rent, location, area, bedrooms, bathrooms,
              characteristics, features, now()
            from properties, generate_series(1, ${n}) g where id = ${templateId}
            returning id)
          insert into catalogue_entries (property_id, business_id, doc, status, operations, type, subtype_key, city_lc, price_sale, price_rent, price_transfer,
            bedrooms, is_featured, rental_kind, geog, updated_at, changed_at, tsv)
          select copies.id, e.business_id, jsonb_set(e.doc::jsonb, '{id}', to_jsonb(copies.id))::json, e.status, e.operations, e.type, e.subtype_key, e.city_lc,
            e.price_sale, e.price_rent, e.price_transfer, e.bedrooms, e.is_featured, e.rental_kind, e.geog, e.updated_at, e.changed_at, e.tsv
          from copies, catalogue_entries e where e.property_id = ${templateId}`
      })
      process.stderr.write(`  seeded ${Math.min(done + batch, LISTINGS).toLocaleString()} / ${LISTINGS.toLocaleString()}\n`)
    }
    await sql`analyze catalogue_entries`
    return business.id
  } finally {
    await sql.end()
  }
}

const businessId = await seed()
const feed = await createFeed(deps, businessId, 'kyero')
const port = await freePort()
const child = Bun.spawn(['bun', new URL('../api/index.ts', import.meta.url).pathname], {
  env: {
    ...process.env,
    DATABASE_URL: url,
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'error',
    QUEUE_PREFIX: `bench-feed-${Date.now()}`,
  },
  stdout: 'ignore',
  stderr: 'inherit',
})
const rss = async () =>
  Number(
    /^VmRSS:\s+(\d+) kB$/m.exec(
      await Bun.file(`/proc/${child.pid}/status`)
        .text()
        .catch(() => ''),
    )?.[1] ?? NaN,
  ) * 1024
const feedUrl = `http://127.0.0.1:${port}${new URL(feed.url).pathname}`

try {
  for (
    let i = 0;
    !(await fetch(`http://127.0.0.1:${port}/healthz`)
      .then((r) => r.ok)
      .catch(() => false));
    i++
  ) {
    if (i > 200) throw new Error('the API did not start')
    await Bun.sleep(50)
  }
  // Warm-up: one small conditional request, so the first full download does not pay for start-up.
  const head = await fetch(feedUrl, { headers: { 'if-none-match': '"none"' } })
  await head.body?.cancel()
  await Bun.sleep(300)

  let etag = ''
  let warmUp = true
  // Twice: the first download pays for compiling the path and the allocator's first growth;
  // the second shows whether memory grows with the download itself.
  for (const run of ['first', 'second']) {
    const before = await rss()
    let peak = before
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await rss())
        await Bun.sleep(25)
      }
    })()
    const started = performance.now()
    const res = await fetch(feedUrl)
    let bytes = 0
    for await (const chunk of res.body!) bytes += chunk.byteLength
    const seconds = (performance.now() - started) / 1000
    sampling = false
    await sampler
    const after = await rss()
    etag = res.headers.get('etag')!
    console.log(
      `\n${run} download of the feed of ${LISTINGS.toLocaleString()} listings: ${mb(bytes)} in ${seconds.toFixed(2)} s ` +
        `= ${(bytes / 1e6 / seconds).toFixed(1)} MB/s   (goal ≥ 20 MB/s)  ${bytes / 1e6 / seconds >= 20 ? 'PASS' : 'FAIL'}`,
    )
    console.log(
      `API RSS: before ${mb(before)}, peak ${mb(peak)} (+${mb(peak - before)}), ` +
        `after ${mb(after)}   (goal: growth < 50 MB)  ${peak - before < 50e6 ? 'PASS' : 'FAIL'}`,
    )
  }

  // The raw keep-alive client of the other benches: fetch cost the generator more CPU than the
  // 304 costs the API on a 2-core machine. A warm-up round first, unmeasured.
  const conditional = prepareRequest('GET', new URL(feedUrl), { 'if-none-match': etag }, '')
  for (const concurrency of [16, 1, 16]) {
    const pool = new Http1Pool(new URL(feedUrl))
    const latencies: number[] = []
    let next = 0
    let wrong = 0
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < CONDITIONAL) {
          const t = performance.now()
          const r = await pool.send(conditional)
          latencies.push(performance.now() - t)
          if (r.status !== 304) wrong++
        }
      }),
    )
    pool.close()
    if (warmUp) {
      warmUp = false
      continue
    }
    latencies.sort((a, b) => a - b)
    const p95 = pct(latencies, 95)
    console.log(
      `304 at c=${concurrency}: ${latencies.length} requests, p50 ${pct(latencies, 50).toFixed(2)} ms, ` +
        `p95 ${p95.toFixed(2)} ms, not 304: ${wrong}   (goal p95 ≤ 5 ms)  ${p95 <= 5 && wrong === 0 ? 'PASS' : 'FAIL'}`,
    )
  }
} finally {
  child.kill('SIGTERM')
  await child.exited
  await database.close()
}
process.exit(0)
