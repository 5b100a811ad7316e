/**
 * `bun run bench images [--count 200] [--distinct 12] [--concurrency 4]`
 *
 * The single-process default (API + workers in one child process, STORAGE_DRIVER=local under a temp
 * DATA_DIR, its own database: DATABASE_URL's name + `_bench_images`) takes `count` photo-like
 * 12-megapixel JPEGs (4000×3000, gradients + noise + shapes, quality 90, EXIF orientation 6 on
 * every fourth) through the real path: createImageUpload (sessions of 50), PUT over HTTP,
 * completeImageUpload, upload-complete, image-watermark in the worker threads, catalogue-reindex;
 * it polls until every file is ready. Then, in the same run, sharp alone does the same transform
 * (shared/media/transform.ts, same text watermark) on the same files, IMAGE_THREADS at a time.
 * Reports images/s of both, their ratio (goal ≥ 0.8) and the peak RSS of the service process
 * (goal ≤ 512 MB; the kernel's VmHWM of the child running API + workers, so it bounds the worker's).
 * `distinct` images are generated (into a temp dir, removed at the end) and reused in turn:
 * generating 200 × 12 MP costs more than processing them.
 */
import sharp from 'sharp'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseFlags } from './flags'
import { migrateDatabase } from '../db/migrate'
import { createApp } from '../api/app'
import { closeApiDeps, createApiDeps } from '../api/runtime'
import { createBusiness } from '../db/queries/businesses'
import { insertKey } from '../db/queries/api-keys'
import { insertProperty } from '../db/queries/properties'
import { generateApiKey } from '../shared/access/api-key-format'
import { loadConfig } from '../shared/platform/config'
import { createLogger } from '../shared/platform/logger'
import { transformImage } from '../shared/media/transform'
import { inputToColumns } from '../shared/listings/property-input'
import { startWorkers } from '../worker/runtime'

const flags = parseFlags(process.argv.slice(2)).flags
const COUNT = Number(flags.count ?? 200)
const DISTINCT = Math.min(COUNT, Number(flags.distinct ?? 12))
const PUT_CONCURRENCY = Number(flags.concurrency ?? 4)
const SESSION_SIZE = 50

async function photo(i: number): Promise<Uint8Array> {
  const W = 4000,
    H = 3000
  // Smooth gradient (sky/wall) + per-pixel noise (sensor grain, what makes photos expensive to code).
  const raw = Buffer.alloc(W * H * 3)
  let seed = 12345 + i * 7919
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed / 0x7fffffff
  }
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const o = (y * W + x) * 3
      const n = (rnd() - 0.5) * 24
      raw[o] = Math.max(0, Math.min(255, 60 + (x / W) * 140 + n + i * 3))
      raw[o + 1] = Math.max(0, Math.min(255, 90 + (y / H) * 110 + n))
      raw[o + 2] = Math.max(0, Math.min(255, 180 - (y / H) * 120 + n))
    }
  }
  const shapes = Buffer.from(`<svg width="${W}" height="${H}" xmlns="http://www.w3.org/2000/svg">
    <rect x="${400 + i * 37}" y="1500" width="1400" height="1200" fill="#8a6a4a" opacity="0.85"/>
    <circle cx="${3000 - i * 23}" cy="700" r="380" fill="#f4e2a1" opacity="0.8"/>
    <polygon points="2200,2900 3300,1600 3900,2900" fill="#2f5d3a" opacity="0.8"/></svg>`)
  let img = sharp(raw, { raw: { width: W, height: H, channels: 3 } })
    .composite([{ input: shapes }])
    .jpeg({ quality: 90 })
  if (i % 4 === 3) img = img.withMetadata({ orientation: 6 })
  return new Uint8Array(await img.toBuffer())
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

/** The service under test: `bun run start`'s shape (API + image workers in one process). */
async function serve(): Promise<never> {
  let handle: (r: Request) => Response | Promise<Response> = () => new Response('starting', { status: 503 })
  // Started first so PUBLIC_URL (in the signed upload URLs) can name its port.
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: 27 * 1024 * 1024, fetch: (r) => handle(r) })
  const config = loadConfig({ ...process.env, PUBLIC_URL: `http://127.0.0.1:${server.port}` })
  const logger = createLogger('warn')
  const deps = await createApiDeps(config, logger)
  const app = createApp(deps)
  handle = (r) => app.handle(r)
  const workers = await startWorkers(config, logger, ['upload-complete', 'image-watermark', 'catalogue-reindex'])
  const business = await createBusiness(deps.database.db, `Bench Imágenes ${Date.now()}`)
  const key = generateApiKey()
  await insertKey(deps.database.db, {
    businessId: business.id,
    keyId: key.keyId,
    secretHash: key.secretHash,
    name: 'bench',
    scopes: ['properties:write', 'properties:read'],
    expiresAt: null,
  })
  const propertyId = await insertProperty(
    deps.database.db,
    business.id,
    inputToColumns({
      operations: ['venta'],
      type: 'casa',
      title: 'Bench',
      pricing: { sale: 1 },
      location: { city: 'Valencia' },
      area: { total: 100 },
    } as never),
  )
  process.on('SIGTERM', async () => {
    await workers.close(10_000)
    server.stop(true)
    await closeApiDeps(deps)
    process.exit(0)
  })
  console.log(JSON.stringify({ port: server.port, apiKey: key.apiKey, propertyId, businessName: business.name }))
  return new Promise<never>(() => {})
}
if (flags.serve) await serve()

const base = loadConfig()
const dbUrl = new URL(base.databaseUrl)
dbUrl.pathname = `/${decodeURIComponent(dbUrl.pathname.slice(1))}_bench_images`
const dataDir = await mkdtemp(join(tmpdir(), 'bench-images-'))
const env = {
  ...process.env,
  DATABASE_URL: dbUrl.toString(),
  DATA_DIR: dataDir,
  STORAGE_DRIVER: 'local',
  QUEUE_PREFIX: `bench-images-${Date.now()}`,
  LOG_LEVEL: 'warn',
  PORT: '0',
}
await migrateDatabase(env.DATABASE_URL)

console.log(`generating ${DISTINCT} distinct 12 MP photos for ${COUNT} files…`)
const photos: Uint8Array[] = []
for (let i = 0; i < DISTINCT; i++) photos.push(await photo(i))
const files = Array.from({ length: COUNT }, (_, i) => photos[i % DISTINCT])
const totalMb = files.reduce((s, f) => s + f.byteLength, 0) / 1e6
console.log(`  ${COUNT} files, ${totalMb.toFixed(0)} MB, mean ${(totalMb / COUNT).toFixed(1)} MB`)

// The single-process default (API served over HTTP + the image workers) runs in a child
// process, so its peak RSS (the kernel's VmHWM) is the service's alone, not this generator's.
const child = Bun.spawn(['bun', import.meta.path, '--serve'], { env, stdout: 'pipe', stderr: 'inherit' })
const service = await (async () => {
  const reader = child.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error('the service process exited before it was ready')
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return JSON.parse(text.slice(0, text.indexOf('\n'))) as { port: number; apiKey: string; propertyId: number; businessName: string }
})()
const memory = async (field: 'VmHWM' | 'VmRSS') => {
  const status = await Bun.file(`/proc/${child.pid}/status`)
    .text()
    .catch(() => '')
  const kb = Number(/^(\w+):\s+(\d+) kB$/m.exec(status.split('\n').find((l) => l.startsWith(field)) ?? '')?.[2] ?? NaN)
  return kb * 1024
}
const rssBefore = await memory('VmRSS')
const config = loadConfig(env)
const propertyId = service.propertyId
const api = (path: string, init: RequestInit = {}) =>
  fetch(`http://127.0.0.1:${service.port}${path}`, { ...init, headers: { 'x-api-key': service.apiKey, 'content-type': 'application/json', ...init.headers } })

const started = performance.now()
const sessions: string[] = []
for (let s = 0; s < COUNT; s += SESSION_SIZE) {
  const chunk = files.slice(s, s + SESSION_SIZE)
  const created = (await (
    await api(`/v1/properties/${propertyId}/images/uploads`, {
      method: 'POST',
      body: JSON.stringify({ files: chunk.map((f, i) => ({ filename: `foto-${s + i}.jpg`, content_type: 'image/jpeg', size: f.byteLength })) }),
    })
  ).json()) as { upload_id: string; files: { url: string; headers: Record<string, string> }[] }
  await mapLimit(chunk, PUT_CONCURRENCY, async (body, i) => {
    const res = await fetch(created.files[i].url, { method: 'PUT', headers: created.files[i].headers, body })
    if (res.status !== 200) throw new Error(`PUT answered ${res.status}`)
  })
  const done = await api(`/v1/properties/${propertyId}/images/uploads/${created.upload_id}/complete`, { method: 'POST' })
  if (done.status !== 202) throw new Error(`complete answered ${done.status}`)
  sessions.push(created.upload_id)
}
const uploadedAt = performance.now()
for (const id of sessions) {
  for (;;) {
    const status = (await (await api(`/v1/properties/${propertyId}/images/uploads/${id}`)).json()) as { data: { state: string; files: { state: string }[] } }
    if (status.data.state === 'completed' || status.data.state === 'failed') {
      const failed = status.data.files.filter((f) => f.state !== 'ready').length
      if (failed) throw new Error(`${failed} files of upload ${id} did not become ready`)
      break
    }
    await Bun.sleep(50)
  }
}
const pipelineSeconds = (performance.now() - started) / 1000
const peakRss = await memory('VmHWM')
child.kill('SIGTERM')
await child.exited

// sharp alone: the same transform on the same files, IMAGE_THREADS at a time, nothing else.
const aloneStart = performance.now()
await mapLimit(files, config.imageThreads, async (f) => {
  await transformImage(f, { maxPixels: config.imageMaxPixels, watermark: { kind: 'text', text: service.businessName } })
})
const aloneSeconds = (performance.now() - aloneStart) / 1000

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`
const pipelineRate = COUNT / pipelineSeconds
const aloneRate = COUNT / aloneSeconds
const uploadSeconds = ((uploadedAt - started) / 1000).toFixed(1)
console.log(`
images bench (${COUNT} × 12 MP JPEG, IMAGE_THREADS=${config.imageThreads}, ${navigator.hardwareConcurrency} cores)
  pipeline (upload → complete → watermark → ready): ${pipelineSeconds.toFixed(1)} s, ${pipelineRate.toFixed(2)} images/s (uploads took ${uploadSeconds} s)
  sharp alone, same transform and files:            ${aloneSeconds.toFixed(1)} s, ${aloneRate.toFixed(2)} images/s
  ratio pipeline / sharp alone:                     ${(pipelineRate / aloneRate).toFixed(2)}  (goal ≥ 0.80)
  peak RSS of the service process (API + workers):  ${mb(peakRss)} (at start: ${mb(rssBefore)}; goal ≤ 512 MB)`)
await rm(dataDir, { recursive: true, force: true })
process.exit(0)
