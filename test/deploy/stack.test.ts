/**
 * `bun run start:stack` as a person drives it (docs/operations.md, "Compose"): compose's processes without
 * Docker — the API and each worker group its own process, S3 through s3rver — on free ports with
 * its own database and queue prefix, then the Compose walkthrough over HTTP: a business and key from
 * the CLI, a property, an upload URL for the host, PUT the photo, complete, publish, and the
 * catalogue's watermarked public image fetched from its URL. SIGTERM stops every process.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import sharp from 'sharp'
import IORedis from 'ioredis'
import { composeTopology } from '../../cli/stack'
import { eventually } from '../helpers/context'
import { orientedJpeg } from '../helpers/images'
import { freePort, ROOT, run } from '../helpers/processes'

const testDb = new URL(process.env.DATABASE_URL!)
const stackDb = new URL(testDb)
stackDb.pathname = `${testDb.pathname}_stack`
const queuePrefix = `stack-${process.pid}`

let port: number
let s3Port: number
let s3Dir: string
let stack: ReturnType<typeof Bun.spawn>
let output = ''
let base: string
let apiKey: string

const env = () => ({ PORT: String(port), DATABASE_URL: stackDb.toString(), QUEUE_PREFIX: queuePrefix, LOG_LEVEL: 'warn' })
const api = (path: string, init: RequestInit & { json?: unknown } = {}) =>
  fetch(`${base}${path}`, {
    ...init,
    headers: { 'x-api-key': apiKey, ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}), ...(init.headers as Record<string, string>) },
    body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
  })
const childPids = () => [...output.matchAll(/^stack: [\w-]+ \(pid (\d+)\)/gm)].map((m) => Number(m[1]))
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

beforeAll(async () => {
  port = await freePort()
  s3Port = await freePort()
  s3Dir = await mkdtemp(join(tmpdir(), 'stack-s3-'))
  base = `http://127.0.0.1:${port}`
  stack = Bun.spawn(['bun', 'run', 'start:stack', '--s3-port', String(s3Port), '--s3-dir', s3Dir], {
    cwd: ROOT,
    env: { ...process.env, ...env() },
    stdout: 'pipe',
    stderr: 'inherit',
    stdin: 'ignore',
  })
  void (async () => {
    const decoder = new TextDecoder()
    for await (const chunk of stack.stdout as ReadableStream<Uint8Array>) output += decoder.decode(chunk)
  })()
  await eventually(async () => output.includes('stack: ready') || output.includes('stack: stopped'), {
    timeoutMs: 90_000,
    what: 'start:stack to be ready',
    get detail() {
      return output
    },
  })
  expect(output, output).toContain('stack: ready')
}, 100_000)

afterAll(async () => {
  if (stack.exitCode === null) {
    stack.kill('SIGKILL')
    for (const pid of childPids()) if (alive(pid)) process.kill(pid, 'SIGKILL')
  }
  await rm(s3Dir, { recursive: true, force: true })
  const redis = new IORedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
  const keys = await redis.keys(`${queuePrefix}:*`)
  if (keys.length) await redis.del(...keys)
  redis.disconnect()
  const admin = postgres({ host: testDb.hostname, port: Number(testDb.port || 5432), user: testDb.username, database: 'postgres', max: 1, onnotice: () => {} })
  await admin.unsafe(`DROP DATABASE IF EXISTS "${stackDb.pathname.slice(1)}" WITH (FORCE)`)
  await admin.end()
})

describe('bun run start:stack', () => {
  test('prints where each piece listens: S3 with both buckets, the API, one process per worker group of compose', async () => {
    expect(output).toContain(
      `stack: s3 (s3rver) http://localhost:${s3Port}: buckets property-originals (originals), property-public (public, CDN_URL http://localhost:${s3Port}/property-public)`,
    )
    expect(output).toContain(`api (pid `)
    expect(output).toContain(`http://127.0.0.1:${port}`)
    const groups = (await composeTopology()).filter((s) => s.queues.length)
    expect(groups.length).toBeGreaterThanOrEqual(3)
    for (const g of groups) expect(output).toMatch(new RegExp(`^stack: ${g.name} \\(pid \\d+\\): queues ${g.queues.join(',')}$`, 'm'))
    expect(childPids().length).toBe(groups.length + 1)
  })

  test("compose's worker health check passes for each group", async () => {
    for (const g of (await composeTopology()).filter((s) => s.queues.length)) {
      const r = await run(['run', 'worker/healthcheck.ts'], { ...env(), WORKER_QUEUES: g.queues.join(',') })
      expect(r.code, r.stderr).toBe(0)
    }
  })

  test('the Compose walkthrough: CLI business and key, property, upload from the host, publish, watermarked public image', async () => {
    const business = await run(['run', 'cli', 'business', 'create', '--name', 'Inmobiliaria Stack', '--json'], env())
    expect(business.code, business.stderr).toBe(0)
    const businessId = JSON.parse(business.stdout.trim().split('\n').at(-1)!).id
    const key = await run(['run', 'cli', 'key', 'create', '--business', String(businessId), '--scopes', 'properties:read,properties:write', '--json'], env())
    expect(key.code, key.stderr).toBe(0)
    apiKey = JSON.parse(key.stdout.trim().split('\n').at(-1)!).api_key

    const created = await api('/v1/properties', {
      method: 'POST',
      json: {
        operations: ['venta'],
        type: 'apartamento',
        title: 'Ático con terraza',
        pricing: { sale: 250000 },
        location: { city: 'Valencia', address: 'Calle de Colón 12' },
        area: { total: 95 },
      },
    })
    const property = (await created.json()) as { id: number }
    expect(created.status, JSON.stringify(property)).toBe(201)

    const photo = await orientedJpeg()
    const uploads = await api(`/v1/properties/${property.id}/images/uploads`, {
      method: 'POST',
      json: { files: [{ filename: 'salon.jpg', content_type: 'image/jpeg', size: photo.byteLength }] },
    })
    const upload = (await uploads.json()) as { upload_id: string; files: { url: string; headers: Record<string, string> }[] }
    expect(uploads.status, JSON.stringify(upload)).toBe(201)
    // Signed for the address a client on the host uses (S3_PUBLIC_ENDPOINT), not the service's.
    expect(new URL(upload.files[0].url).origin).toBe(`http://localhost:${s3Port}`)
    const put = await fetch(upload.files[0].url, { method: 'PUT', headers: upload.files[0].headers, body: photo })
    expect(put.status, await put.text()).toBe(200)

    const complete = await api(`/v1/properties/${property.id}/images/uploads/${upload.upload_id}/complete`, { method: 'POST' })
    expect(complete.status, await complete.text()).toBe(202)
    let last = ''
    const state = await eventually(
      async () => {
        last = await (await api(`/v1/properties/${property.id}/images/uploads/${upload.upload_id}`)).text()
        const s = JSON.parse(last).data.state as string
        return s === 'completed' || s === 'failed' ? s : null
      },
      {
        timeoutMs: 30_000,
        what: 'the upload to finish',
        get detail() {
          return last
        },
      },
    )
    expect(state, last).toBe('completed')

    const published = await api(`/v1/properties/${property.id}/publish`, { method: 'POST' })
    expect(published.status, await published.text()).toBe(200)

    const catalogue = (await (await api('/v1/properties?limit=100')).json()) as { data: { id: number; images: { url: string }[] }[] }
    const listed = catalogue.data.find((p) => p.id === property.id)
    expect(listed?.images.length, JSON.stringify(catalogue)).toBe(1)
    const image = listed!.images[0]
    expect(image.url).toStartWith(`http://localhost:${s3Port}/property-public/`)
    const detail = (await (await api(`/v1/properties/${property.id}`)).json()) as { data: { images: { url: string }[] } }
    expect(detail.data.images.map((i) => i.url)).toEqual([image.url])

    const served = await fetch(image.url)
    expect(served.status).toBe(200)
    const bytes = new Uint8Array(await served.arrayBuffer())
    const meta = await sharp(bytes).metadata()
    expect([meta.format, meta.width, meta.height, meta.exif]).toEqual(['jpeg', 480, 640, undefined])
    // The photo is blue-grey with a red corner: white pixels are the watermark's text.
    const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true })
    let white = 0
    for (let i = 0; i < data.length; i += info.channels) if (data[i] > 200 && data[i + 1] > 200 && data[i + 2] > 200) white++
    expect(white).toBeGreaterThan(100)
  }, 90_000)

  test('SIGTERM stops every process of the stack and s3rver', async () => {
    const pids = childPids()
    stack.kill('SIGTERM')
    expect(await stack.exited).toBe(0)
    expect(output).toContain('stack: stopped')
    expect(pids.filter(alive)).toEqual([])
    expect(
      await fetch(`${base}/healthz`).then(
        () => 'answered',
        () => 'refused',
      ),
    ).toBe('refused')
    expect(
      await fetch(`http://127.0.0.1:${s3Port}/`).then(
        () => 'answered',
        () => 'refused',
      ),
    ).toBe('refused')
    const r = await run(['run', 'worker/healthcheck.ts'], { ...env(), WORKER_QUEUES: 'lead-ingest' })
    expect(r.code).toBe(1)
  }, 60_000)
})

describe('bun run start:stack refuses clearly', () => {
  test('PostgreSQL unreachable: the migration step fails, nothing else starts, exit 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'stack-s3-'))
    try {
      const r = await run(
        ['run', 'start:stack', '--s3-port', '0', '--s3-dir', dir],
        { PORT: String(await freePort()), DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/x`, QUEUE_PREFIX: `${queuePrefix}-refused` },
        60_000,
      )
      expect(r.code, r.stdout + r.stderr).toBe(1)
      expect(r.stderr).toContain('PostgreSQL is not reachable')
      expect(r.stdout).toContain('stack: migrate failed with code 1')
      expect(r.stdout).not.toContain('(pid ')
      expect(r.stdout).toContain('stack: stopped')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 60_000)

  test('an unknown flag is a usage error naming it, exit 2', async () => {
    const r = await run(['run', 'start:stack', '--s3-prot', '9000'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("'--s3-prot'")
    expect(r.stderr).toContain('usage: bun run start:stack')
  })
})
