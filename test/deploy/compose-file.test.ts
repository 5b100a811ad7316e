/**
 * compose.yaml and the Dockerfile hold what `docker compose up` needs to give a working system
 * (no Docker engine runs here, so this is what can be checked): pinned images, a stop grace
 * period longer than the drain, the bucket init service, health checks, the environment matched
 * to shared/platform/config.ts, a required APP_SECRET, one PostgreSQL password, every queue
 * consumed, and `docker-compose config` validating the file.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseConnectionUrl } from '../../db/connection-url'
import { DEFAULT_DATABASE_URL, loadConfig } from '../../shared/platform/config'
import { QUEUE_NAMES } from '../../shared/platform/queue-names'
import { ROOT } from '../helpers/processes'

interface Service {
  image?: string
  build?: unknown
  command?: string[] | string
  entrypoint?: string[]
  environment?: Record<string, string>
  depends_on?: Record<string, { condition: string }>
  healthcheck?: { test: string[] }
  restart?: string
  stop_grace_period?: string
  profiles?: string[]
  ports?: string[]
  volumes?: string[]
}

const compose = Bun.YAML.parse(await Bun.file(join(ROOT, 'compose.yaml')).text()) as { services: Record<string, Service> }
const services = Object.entries(compose.services)
const dockerfile = await Bun.file(join(ROOT, 'Dockerfile')).text()
const configSource = await Bun.file(join(ROOT, 'shared/platform/config.ts')).text()

const commandOf = (s: Service) => (Array.isArray(s.command) ? s.command.join(' ') : (s.command ?? ''))
/** Services that run our image: the API, the workers and the one-shot migrate. */
const appServices = services.filter(([, s]) => s.build !== undefined)
const longRunningApp = appServices.filter(([, s]) => /start:(api|worker)/.test(commandOf(s)))
const workerServices = appServices.filter(([, s]) => commandOf(s).includes('start:worker'))
const oneShot = (s: Service) => s.restart === 'no'
const seconds = (v: string) => {
  const m = /^(\d+)(ms|s|m)$/.exec(v)
  if (!m) throw new Error(`unreadable duration ${v}`)
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60 }[m[2] as 'ms' | 's' | 'm']
}
/** compose's `${NAME:-default}` as the service sees it when NAME is unset. */
const resolved = (v: string) => v.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1')
const resolvedEnv = (s: Service) => Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, resolved(v)]))

describe('compose.yaml', () => {
  test('every image is pinned to a version (no latest, no bare name); the built image starts from a pinned Bun', () => {
    for (const [name, s] of services) {
      if (s.build !== undefined) continue
      expect(s.image, name).toMatch(/^[\w./-]+:[\w.-]+$/)
      expect(s.image!.split(':')[1], name).not.toBe('latest')
      expect(s.image!.split(':')[1], name).toMatch(/\d/)
    }
    const froms = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1])
    expect(froms.length).toBeGreaterThan(0)
    for (const image of froms) expect(image).toMatch(/^oven\/bun:\d+\.\d+\.\d+$/)
  })

  test('api and workers wait longer than their drain (SHUTDOWN_TIMEOUT_MS + the 5 s hard limit) before SIGKILL', () => {
    expect(longRunningApp.length).toBeGreaterThanOrEqual(4)
    for (const [name, s] of longRunningApp) {
      const drainMs = loadConfig({ ...resolvedEnv(s), APP_SECRET: 'x'.repeat(40) }).shutdownTimeoutMs
      expect(s.stop_grace_period, name).toBeDefined()
      expect(seconds(s.stop_grace_period!) * 1000, name).toBeGreaterThan(drainMs + 5000)
    }
  })

  test('a one-shot minio/mc service creates both buckets and opens the public one; the app waits for it', () => {
    const env = appServices[0][1].environment!
    const init = services.filter(([, s]) => s.image?.startsWith('minio/mc:'))
    expect(init.length).toBe(1)
    const [initName, initService] = init[0]
    expect(oneShot(initService)).toBe(true)
    const script = [...(initService.entrypoint ?? []), commandOf(initService)].join(' ')
    expect(script).toMatch(new RegExp(`mc mb --ignore-existing .*/${env.S3_PRIVATE_BUCKET}\\b`))
    expect(script).toMatch(new RegExp(`mc mb --ignore-existing .*/${env.S3_PUBLIC_BUCKET}\\b`))
    expect(script).toMatch(new RegExp(`mc anonymous set download \\S+/${env.S3_PUBLIC_BUCKET}$`))
    expect(script).not.toMatch(new RegExp(`anonymous set \\w+ \\S+/${env.S3_PRIVATE_BUCKET}\\b`))
    for (const [name, s] of appServices) expect(s.depends_on?.[initName]?.condition, name).toBe('service_completed_successfully')
  })

  test('CDN_URL and presigned upload URLs name the host side of MinIO, the service talks to it inside compose', () => {
    const env = appServices[0][1].environment!
    const minioPorts = (compose.services.minio.ports ?? []).map((p) => p.split(':')[0])
    const cdn = new URL(resolved(env.CDN_URL))
    const publicEndpoint = new URL(resolved(env.S3_PUBLIC_ENDPOINT))
    expect(new URL(env.S3_ENDPOINT).hostname).toBe('minio')
    for (const u of [cdn, publicEndpoint]) {
      expect(u.hostname).toBe('localhost')
      expect(minioPorts).toContain(u.port)
    }
    expect(cdn.pathname).toBe(`/${env.S3_PUBLIC_BUCKET}`)
    expect(new URL(resolved(env.PUBLIC_URL)).port).toBe(compose.services.api.ports![0].split(':')[0])
  })

  test('every long-running service has a health check', () => {
    for (const [name, s] of services) {
      if (oneShot(s)) continue
      expect(s.healthcheck?.test?.length, name).toBeGreaterThan(0)
    }
    for (const [name, s] of workerServices) expect(s.healthcheck!.test.join(' '), name).toContain('worker/healthcheck.ts')
  })

  test('every variable compose gives the app is one shared/platform/config.ts reads', () => {
    const known = new Set([...configSource.matchAll(/env\.([A-Z][A-Z0-9_]+)|\(env, '([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1] ?? m[2]))
    expect(known.size).toBeGreaterThan(20)
    for (const [name, s] of appServices) {
      const unknown = Object.keys(s.environment ?? {}).filter((v) => !known.has(v))
      expect(unknown, name).toEqual([])
    }
  })

  test('the app configuration compose sets is valid, with any APP_SECRET of 32+ characters', () => {
    for (const [name, s] of appServices) {
      expect(() => loadConfig({ ...resolvedEnv(s), APP_SECRET: 'x'.repeat(40) }), name).not.toThrow()
    }
  })

  test('APP_SECRET has no default: compose refuses to start without it', () => {
    for (const [name, s] of appServices) expect(s.environment!.APP_SECRET, name).toMatch(/^\$\{APP_SECRET:\?.+\}$/)
  })

  test('one PostgreSQL password and database: compose, the app in compose, the default DATABASE_URL of the README', () => {
    const pg = compose.services.postgres.environment!
    const readme = new URL(DEFAULT_DATABASE_URL)
    for (const [name, s] of appServices) {
      // The ha profile's URLs list several hosts, which WHATWG URL cannot parse.
      for (const variable of ['DATABASE_URL', 'DATABASE_DIRECT_URL', 'DATABASE_READ_URL']) {
        const raw = s.environment![variable]
        if (raw === undefined) continue
        const url = parseConnectionUrl(raw)
        expect(decodeURIComponent(url.userinfo.split(':')[1] ?? ''), `${name} ${variable}`).toBe(pg.POSTGRES_PASSWORD)
        expect(url.database, `${name} ${variable}`).toBe(pg.POSTGRES_DB)
      }
    }
    expect(readme.password).toBe(pg.POSTGRES_PASSWORD)
    expect(readme.pathname).toBe(`/${pg.POSTGRES_DB}`)
    expect(compose.services.postgres.ports).toContain(`${readme.port}:5432`)
  })

  test('the worker services of the default profile consume every queue, each exactly once', () => {
    const consumed = workerServices.filter(([, s]) => !s.profiles?.length).flatMap(([, s]) => s.environment!.WORKER_QUEUES.split(','))
    expect([...consumed].sort()).toEqual([...QUEUE_NAMES].sort())
  })

  test('the monitoring profile mounts files that exist', () => {
    const monitoring = services.filter(([, s]) => s.profiles?.includes('monitoring'))
    expect(monitoring.map(([n]) => n).sort()).toEqual(['grafana', 'prometheus'])
    for (const [, s] of monitoring) {
      for (const v of s.volumes ?? []) {
        if (v.startsWith('./')) expect(existsSync(join(ROOT, v.split(':')[0])), v).toBe(true)
      }
    }
  })

  test('docker-compose config validates the file, and refuses it without APP_SECRET', async () => {
    // The test command installs Debian's docker-compose; without it this check cannot run.
    expect(Bun.which('docker-compose'), 'docker-compose is not installed: apt-get install -y docker-compose').not.toBeNull()
    const dir = await mkdtemp(join(tmpdir(), 'compose-env-'))
    const emptyEnvFile = join(dir, 'empty.env')
    await Bun.write(emptyEnvFile, '')
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'APP_SECRET')) as Record<string, string>
    const validate = (extra: Record<string, string>, profile: string[] = []) =>
      Bun.spawnSync(['docker-compose', '--env-file', emptyEnvFile, '-f', join(ROOT, 'compose.yaml'), ...profile, 'config', '-q'], {
        env: { ...env, ...extra },
        stderr: 'pipe',
      })
    try {
      for (const profile of [[], ['--profile', 'monitoring']]) {
        const ok = validate({ APP_SECRET: 'x'.repeat(48) }, profile)
        expect(ok.exitCode, ok.stderr.toString()).toBe(0)
      }
      const refused = validate({})
      expect(refused.exitCode).not.toBe(0)
      expect(refused.stderr.toString()).toContain('set APP_SECRET')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe('Dockerfile', () => {
  test('fonts for the text watermark, ffmpeg, a data directory the bun user owns, a health check', () => {
    const apt = /apt-get install[^\n]*(?:\\\n[^\n]*)*/.exec(dockerfile)?.[0] ?? ''
    for (const pkg of ['ffmpeg', 'fontconfig', 'fonts-dejavu-core']) expect(apt).toContain(pkg)
    const dataDir = /ENV DATA_DIR=(\S+)/.exec(dockerfile)?.[1]
    expect(dataDir).toBeDefined()
    expect(dockerfile).toContain(`chown bun:bun ${dataDir}`)
    expect(dockerfile.indexOf(`chown bun:bun ${dataDir}`)).toBeLessThan(dockerfile.indexOf('USER bun'))
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\\\n\s+CMD \["bun", "-e", ".*\/healthz/m)
  })
})
