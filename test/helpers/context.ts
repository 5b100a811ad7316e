/**
 * A test's own world: deps built from config with a queue prefix unique to the test file, the
 * app, and helpers to seed a business with a key. Nothing here mocks PostgreSQL or Redis.
 */
import { randomBytes } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { createApp, type App } from '../../api/app'
import type { AppDeps } from '../../api/deps'
import { closeApiDeps, createApiDeps } from '../../api/runtime'
import { insertKey } from '../../db/queries/api-keys'
import { createBusiness } from '../../db/queries/businesses'
import { businesses } from '../../db/schema'
import { generateApiKey } from '../../shared/access/api-key-format'
import { loadConfig, type Config } from '../../shared/platform/config'
import { createLogger } from '../../shared/platform/logger'
import { SCOPES, type Scope } from '../../shared/access/scopes'

export { eventually } from './eventually'

export interface TestContext {
  deps: AppDeps
  app: App
  config: Config
  /** Log lines written by the app during this test file (for secret scans). */
  logs: string[]
  businessIds: number[]
  close(): Promise<void>
}

/**
 * Where the caller's own service listens (a newcomer who runs it on another port has PORT
 * exported): not the test's. A test's app answers at the defaults unless the test says otherwise.
 */
const CALLERS_ADDRESS = ['PORT', 'PUBLIC_URL', 'CDN_URL']

export async function createTestContext(env: Record<string, string | undefined> = {}): Promise<TestContext> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !CALLERS_ADDRESS.includes(name)))
  const config = loadConfig({ ...inherited, QUEUE_PREFIX: `test-${randomBytes(4).toString('hex')}`, ...env })
  const logs: string[] = []
  const logger = createLogger('debug', {}, (line) => logs.push(line))
  const deps = await createApiDeps(config, logger)
  const app = createApp(deps)
  const businessIds: number[] = []
  return {
    deps,
    app,
    config,
    logs,
    businessIds,
    async close() {
      for (const id of businessIds) await deps.database.db.delete(businesses).where(eq(businesses.id, id))
      const keys = await deps.redis.keys(`${config.queuePrefix}:*`).catch(() => [] as string[])
      if (keys.length) await deps.redis.del(...keys).catch(() => {})
      await closeApiDeps(deps)
    },
  }
}

export interface SeededBusiness {
  id: number
  name: string
  apiKey: string
  keyId: string
  /** Makes another key for this business. */
  key(scopes?: Scope[], options?: { expiresAt?: Date | null; name?: string }): Promise<{ apiKey: string; keyId: string }>
}

export async function seedBusiness(ctx: TestContext, options: { name?: string; scopes?: Scope[] } = {}): Promise<SeededBusiness> {
  const name = options.name ?? `Inmobiliaria ${randomBytes(3).toString('hex')}`
  const business = await createBusiness(ctx.deps.database.db, name)
  ctx.businessIds.push(business.id)
  const key = async (scopes: Scope[] = [...SCOPES], opts: { expiresAt?: Date | null; name?: string } = {}) => {
    const k = generateApiKey()
    await insertKey(ctx.deps.database.db, {
      businessId: business.id,
      keyId: k.keyId,
      secretHash: k.secretHash,
      name: opts.name ?? 'test',
      scopes,
      expiresAt: opts.expiresAt ?? null,
    })
    return { apiKey: k.apiKey, keyId: k.keyId }
  }
  const first = await key(options.scopes)
  return { id: business.id, name, apiKey: first.apiKey, keyId: first.keyId, key }
}

export interface ApiResponse<T = any> {
  status: number
  headers: Headers
  body: T
  text: string
}

/** One HTTP call through the app. `body` objects are sent as JSON; strings are sent raw. */
export async function call<T = any>(
  app: App,
  method: string,
  path: string,
  options: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.key) headers['x-api-key'] ??= options.key
  let body: string | undefined
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json'
  }
  const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }))
  const text = await res.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {}
  return { status: res.status, headers: res.headers, body: parsed as T, text }
}
