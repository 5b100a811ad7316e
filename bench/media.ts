/**
 * `bun run bench media [--runs 3] [--seconds 60] [--images 50] [--listings 100] [--requests 1000] [--skip transcode,import,catalogue]`
 *
 * Three speed goals for contract §9, measured side by side in one run against the
 * single-process default (API on a real Bun.serve + every media worker in this process, local
 * storage under a temp DATA_DIR, its own database: DATABASE_URL's name + `_bench_media`):
 *
 * 1. transcode: a `--seconds` 1080p H.264/AAC clip (generated once with ffmpeg) through
 *    completeVideoUpload → video-transcode → ready, against a bare ffmpeg run of exactly the same
 *    commands (shared/media/transcode.ts: the encode and the poster). Wall time of each, `--runs`
 *    times alternated; goal: pipeline ≤ 1.1 × bare (our overhead is the queue and the storage).
 * 2. import: `--images` photos (3 MP JPEGs) imported by URL from a local HTTP server vs uploaded
 *    (create, PUT over HTTP 4 at a time, complete), each to `ready`; goal: import ≥ 0.8 × upload.
 * 3. catalogue: `--listings` published listings with 20 ready images each; GET /properties
 *    (limit 100) p50/p95 over `--requests` requests at c=1, before, during (PATCH title / cover /
 *    PUT order on random listings, 20 per second) and after a round of image management; goal:
 *    p95 unchanged within noise.
 */
import sharp from 'sharp'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { parseFlags } from './flags'
import { migrateDatabase } from '../db/migrate'
import { createApp } from '../api/app'
import { closeApiDeps, createApiDeps } from '../api/runtime'
import { createBusiness } from '../db/queries/businesses'
import { insertKey } from '../db/queries/api-keys'
import { generateApiKey } from '../shared/access/api-key-format'
import { loadConfig } from '../shared/platform/config'
import { createLogger } from '../shared/platform/logger'
import { reindexCatalogue } from '../shared/listings/operations'
import { RENDITION, posterArgs, probeVideo, transcodeArgs } from '../shared/media/transcode'
import { startWorkers } from '../worker/runtime'

const flags = parseFlags(process.argv.slice(2)).flags
const RUNS = Number(flags.runs ?? 3)
const SECONDS = Number(flags.seconds ?? 60)
const IMAGES = Number(flags.images ?? 50)
const LISTINGS = Number(flags.listings ?? 100)
const REQUESTS = Number(flags.requests ?? 1000)
const SKIP = new Set(
  String(flags.skip ?? '')
    .split(',')
    .filter(Boolean),
)

const base = loadConfig()
const dbUrl = new URL(base.databaseUrl)
dbUrl.pathname = `/${decodeURIComponent(dbUrl.pathname.slice(1))}_bench_media`
await migrateDatabase(dbUrl.toString())
const dataDir = await mkdtemp(join(tmpdir(), 'bench-media-'))
const work = await mkdtemp(join(tmpdir(), 'bench-media-work-'))

// The service: API over HTTP (PUBLIC_URL names its port, for the upload URLs) and the workers.
let handle: (r: Request) => Response | Promise<Response> = () => new Response('starting', { status: 503 })
const server = Bun.serve({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: Number.MAX_SAFE_INTEGER, fetch: (r) => handle(r) })
const config = loadConfig({
  ...process.env,
  DATABASE_URL: dbUrl.toString(),
  DATA_DIR: dataDir,
  STORAGE_DRIVER: 'local',
  QUEUE_PREFIX: `bench-media-${Date.now()}`,
  PUBLIC_URL: `http://127.0.0.1:${server.port}`,
  IMAGE_IMPORT_ALLOW_HOSTS: '127.0.0.1',
})
const logger = createLogger('warn')
const deps = await createApiDeps(config, logger)
handle = createApp(deps).handle
const workers = await startWorkers(config, logger, ['upload-complete', 'image-watermark', 'catalogue-reindex', 'video-transcode', 'storage-cleanup'])
const business = await createBusiness(deps.database.db, `Bench Media ${Date.now()}`)
const key = generateApiKey()
await insertKey(deps.database.db, {
  businessId: business.id,
  keyId: key.keyId,
  secretHash: key.secretHash,
  name: 'bench',
  scopes: ['properties:write', 'properties:read'],
  expiresAt: null,
})

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method,
    headers: { 'x-api-key': key.apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`)
  return JSON.parse(text)
}
const newProperty = async (publish = false) => {
  const { id } = await api('POST', '/v1/properties', {
    operations: ['venta'],
    type: 'casa',
    title: 'Bench',
    pricing: { sale: 100000 },
    location: { city: 'Valencia' },
    area: { total: 100 },
  })
  if (publish) await api('POST', `/v1/properties/${id}/publish`)
  return id as number
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]
const run = async (cmd: string[]) => {
  const proc = Bun.spawn(cmd, { stdout: 'ignore', stderr: 'pipe' })
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${cmd[0]} failed: ${stderr}`)
}
async function mapLimit<T>(items: T[], limit: number, fn: (item: T, i: number) => Promise<void>) {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        await fn(items[i], i)
      }
    }),
  )
}
const load = async () =>
  (
    await Bun.file('/proc/loadavg')
      .text()
      .catch(() => '? ? ?')
  )
    .split(' ')
    .slice(0, 3)
    .join(' ')
const lines: string[] = [
  `media bench (${navigator.hardwareConcurrency} cores, ffmpeg ${await ffmpegVersion()}, local storage; load average at start ${await load()})`,
]
async function ffmpegVersion() {
  const proc = Bun.spawn(['ffmpeg', '-version'], { stdout: 'pipe' })
  return (await new Response(proc.stdout).text()).split(' ')[2]
}

// ---- 1. transcode: pipeline vs bare ffmpeg ----
if (!SKIP.has('transcode')) {
  const clip = join(work, 'clip.mp4')
  console.log(`generating a ${SECONDS} s 1080p30 H.264/AAC clip…`)
  // Test pattern with grain (x264 cannot skip it like a flat pattern) at a phone camera's
  // 1080p30 bitrate (16 Mb/s), stereo tone.
  await run([
    'ffmpeg',
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=1920x1080:rate=30:duration=${SECONDS},noise=alls=8:allf=t`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:sample_rate=48000:duration=${SECONDS}`,
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-b:v',
    '16M',
    '-maxrate',
    '16M',
    '-bufsize',
    '32M',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-ac',
    '2',
    '-shortest',
    clip,
  ])
  const size = Bun.file(clip).size
  const body = new Uint8Array(await Bun.file(clip).arrayBuffer())
  const probe = await probeVideo(clip)
  const bare: number[] = []
  const pipeline: number[] = []
  for (let r = 0; r < RUNS; r++) {
    // Bare: the same encode and poster commands, nothing else.
    const out = await mkdtemp(join(work, 'bare-'))
    let t = performance.now()
    await run(transcodeArgs(clip, out, probe))
    await run(posterArgs(join(out, RENDITION.mp4), join(out, RENDITION.poster), 1))
    bare.push((performance.now() - t) / 1000)
    await rm(out, { recursive: true, force: true })

    // Through the service: complete → queue → download → probe → encode → poster → upload → ready.
    const propertyId = await newProperty()
    const created = await api('POST', `/v1/properties/${propertyId}/videos/uploads`, { filename: 'clip.mp4', content_type: 'video/mp4', size })
    const put = await fetch(created.upload.url, { method: 'PUT', headers: created.upload.headers, body })
    if (put.status !== 200) throw new Error(`PUT answered ${put.status}`)
    t = performance.now()
    await api('POST', `/v1/properties/${propertyId}/videos/${created.video_id}/complete`)
    for (;;) {
      const list = await api('GET', `/v1/properties/${propertyId}/videos`)
      const state = list.data[0].state
      if (state === 'failed') throw new Error(`transcode failed: ${list.data[0].error}`)
      if (state === 'ready') break
      await Bun.sleep(50)
    }
    pipeline.push((performance.now() - t) / 1000)
    console.log(`  run ${r + 1}: bare ${bare[r].toFixed(2)} s, pipeline ${pipeline[r].toFixed(2)} s`)
  }
  const ratio = median(pipeline) / median(bare)
  lines.push(
    `transcode of a ${SECONDS} s 1080p30 clip (${(size / 1e6).toFixed(1)} MB) to HLS + MP4 (1280×720) + poster, ${RUNS} runs alternated:`,
    `  bare ffmpeg, same commands:        ${bare.map((x) => x.toFixed(2)).join(' / ')} s (median ${median(bare).toFixed(2)} s)`,
    `  pipeline (complete → ready):       ${pipeline.map((x) => x.toFixed(2)).join(' / ')} s (median ${median(pipeline).toFixed(2)} s)`,
    `  ratio pipeline / bare:             ${ratio.toFixed(3)}  (goal ≤ 1.10: ${ratio <= 1.1 ? 'met' : 'NOT met'})`,
  )
}

// ---- 2. import vs upload ----
if (!SKIP.has('import')) {
  console.log(`generating ${IMAGES} photos…`)
  const photos: Uint8Array[] = []
  for (let i = 0; i < IMAGES; i++) {
    const noise = await sharp({
      create: { width: 2000, height: 1500, channels: 3, background: { r: 40 + i, g: 120, b: 200 - i }, noise: { type: 'gaussian', mean: 128, sigma: 30 } },
    })
      .jpeg({ quality: 88 })
      .toBuffer()
    photos.push(new Uint8Array(noise))
  }
  const crm = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (r) => new Response(photos[Number(new URL(r.url).pathname.slice(1))], { headers: { 'content-type': 'image/jpeg' } }),
  })
  const waitFor = async (propertyId: number, uploadId: string) => {
    for (;;) {
      const s = await api('GET', `/v1/properties/${propertyId}/images/uploads/${uploadId}`)
      if (s.data.state === 'failed' || s.data.state === 'completed') {
        const bad = s.data.files.filter((f: { state: string }) => f.state !== 'ready').length
        if (bad) throw new Error(`${bad} files did not become ready`)
        return
      }
      await Bun.sleep(50)
    }
  }
  const uploads: number[] = []
  const imports: number[] = []
  for (let r = 0; r < RUNS; r++) {
    let propertyId = await newProperty()
    let t = performance.now()
    const created = await api('POST', `/v1/properties/${propertyId}/images/uploads`, {
      files: photos.map((p, i) => ({ filename: `${i}.jpg`, content_type: 'image/jpeg', size: p.byteLength })),
    })
    await mapLimit(photos, 4, async (p, i) => {
      const res = await fetch(created.files[i].url, { method: 'PUT', headers: created.files[i].headers, body: p })
      if (res.status !== 200) throw new Error(`PUT answered ${res.status}`)
    })
    await api('POST', `/v1/properties/${propertyId}/images/uploads/${created.upload_id}/complete`)
    await waitFor(propertyId, created.upload_id)
    uploads.push((performance.now() - t) / 1000)

    propertyId = await newProperty()
    t = performance.now()
    const started = await api('POST', `/v1/properties/${propertyId}/images/imports`, {
      images: photos.map((_, i) => ({ url: `http://127.0.0.1:${crm.port}/${i}` })),
    })
    await waitFor(propertyId, started.upload_id)
    imports.push((performance.now() - t) / 1000)
    console.log(`  run ${r + 1}: upload ${uploads[r].toFixed(2)} s, import ${imports[r].toFixed(2)} s`)
  }
  crm.stop(true)
  const rate = (s: number) => IMAGES / s
  const ratio = rate(median(imports)) / rate(median(uploads))
  lines.push(
    `${IMAGES} photos (2000×1500 JPEG, ${(photos.reduce((s, p) => s + p.byteLength, 0) / IMAGES / 1e6).toFixed(1)} ` +
      `MB mean) to ready, IMAGE_THREADS=${config.imageThreads}, ${RUNS} runs alternated:`,
    `  upload (create, PUT ×4, complete):   ${uploads.map((x) => x.toFixed(2)).join(' / ')} s → ${rate(median(uploads)).toFixed(2)} images/s`,
    `  import by URL from a local server:   ${imports.map((x) => x.toFixed(2)).join(' / ')} s → ${rate(median(imports)).toFixed(2)} images/s`,
    `  ratio import / upload:               ${ratio.toFixed(3)}  (goal ≥ 0.80: ${ratio >= 0.8 ? 'met' : 'NOT met'})`,
  )
}

// ---- 3. the catalogue while images are managed ----
if (!SKIP.has('catalogue')) {
  console.log(`seeding 2 × ${LISTINGS} published listings with 20 ready images each…`)
  // Two identical businesses: A has its images managed, B never does. Requests alternate A, B,
  // so both see the same machine (other processes, GC, PostgreSQL's caches): B is the control,
  // and p95(A) / p95(B) isolates what managing A's images does to A's catalogue reads.
  const control = await createBusiness(deps.database.db, `Bench Media control ${Date.now()}`)
  const controlKey = generateApiKey()
  await insertKey(deps.database.db, {
    businessId: control.id,
    keyId: controlKey.keyId,
    secretHash: controlKey.secretHash,
    name: 'bench',
    scopes: ['properties:write', 'properties:read'],
    expiresAt: null,
  })
  const ids: number[] = []
  for (let i = 0; i < LISTINGS; i++) ids.push(await newProperty(true))
  await deps.database.db.execute(sql`
    insert into properties (business_id, operations, type, title, location, area, published_at)
    select ${control.id}, operations, type, title, location, area, published_at
    from properties where business_id = ${business.id} and id = any(${`{${ids.join(',')}}`}::int[])`)
  for (const b of [business.id, control.id]) {
    await deps.database.db.execute(sql`
      insert into property_images (business_id, property_id, original_key, public_key, public_url, position, is_primary, state, width, height, title)
      select ${b}, p.id, 'originals/' || md5(p.id || '-' || n), 'images/' || md5(p.id || '/' || n) || '.jpg',
             ${config.cdnUrl} || '/images/' || md5(p.id || '/' || n) || '.jpg', n, n = 1, 'ready', 1920, 1280, 'Foto ' || n
      from properties p, generate_series(1, 20) n where p.business_id = ${b}`)
    await reindexCatalogue(deps, { businessId: b, batchSize: 500 })
  }
  const imagesOf = new Map<number, string[]>()
  for (const id of ids)
    imagesOf.set(
      id,
      (await api('GET', `/v1/properties/${id}/images`)).data.map((i: { id: string }) => i.id),
    )

  const get = async (apiKey: string) => {
    const t = performance.now()
    const res = await fetch(`http://127.0.0.1:${server.port}/v1/properties?limit=100`, { headers: { 'x-api-key': apiKey } })
    await res.arrayBuffer()
    return performance.now() - t
  }
  const measure = async () => {
    const a: number[] = []
    const b: number[] = []
    for (let i = 0; i < REQUESTS; i++) {
      a.push(await get(key.apiKey))
      b.push(await get(controlKey.apiKey))
    }
    return { p50: pct(a, 50), p95: pct(a, 95), controlP50: pct(b, 50), controlP95: pct(b, 95) }
  }
  let ops = 0
  let opsBusy = 0
  const manage = async () => {
    const id = ids[Math.floor(Math.random() * ids.length)]
    const list = imagesOf.get(id)!
    const t = performance.now()
    const kind = ops % 3
    if (kind === 0) await api('PATCH', `/v1/properties/${id}/images/${list[ops % list.length]}`, { title: `Título ${ops}` })
    else if (kind === 1) await api('PATCH', `/v1/properties/${id}/images/${list[(ops * 7) % list.length]}`, { is_primary: true })
    else {
      list.reverse()
      await api('PUT', `/v1/properties/${id}/images/order`, { image_ids: list })
    }
    if (kind === 1)
      imagesOf.set(
        id,
        (await api('GET', `/v1/properties/${id}/images`)).data.map((i: { id: string }) => i.id),
      )
    opsBusy += performance.now() - t
    ops++
  }

  await measure() // warm-up
  const before = await measure()
  let stop = false
  const loop = (async () => {
    while (!stop) {
      const t = performance.now()
      await manage()
      await Bun.sleep(Math.max(0, 50 - (performance.now() - t)))
    }
  })()
  const during = await measure()
  stop = true
  await loop
  const duringOps = ops
  for (let i = 0; i < 300; i++) await manage()
  const after = await measure()
  type M = Awaited<ReturnType<typeof measure>>
  const f = (m: M) =>
    `A p50 ${m.p50.toFixed(2)} / p95 ${m.p95.toFixed(2)} ms, B p50 ${m.controlP50.toFixed(2)} ` +
    `/ p95 ${m.controlP95.toFixed(2)} ms, p95 A/B ${(m.p95 / m.controlP95).toFixed(2)}`
  lines.push(
    `GET /properties?limit=100, ${LISTINGS} listings × 20 images; A's images managed, B the identical control; ${REQUESTS} requests each, alternated, c=1:`,
    `  before any management:                       ${f(before)}`,
    `  during management (${duringOps} changes to A at ≤ 20/s): ${f(during)}`,
    `  after ${ops} changes to A:                     ${f(after)}`,
    `  a change (PATCH title / cover, PUT order) took ${(opsBusy / ops).toFixed(1)} ` +
      `ms on average; goal: A's p95 unchanged within noise (A/B stays ≈ its value before)`,
  )
}

lines.push(`load average at the end: ${await load()}`)
console.log(`\n${lines.join('\n')}`)
await workers.close(10_000)
server.stop(true)
await closeApiDeps(deps)
await rm(dataDir, { recursive: true, force: true })
await rm(work, { recursive: true, force: true })
process.exit(0)
