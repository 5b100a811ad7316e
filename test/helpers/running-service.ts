/**
 * The API on a real listener (a free port on 127.0.0.1), with the test's own queue prefix and
 * data directory, for tests that talk HTTP to it from outside the process's handler: a browser,
 * the typed client. Seeding goes through the test context built from the same config.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startApi, type RunningApi } from '../../api/server'
import { createLogger } from '../../shared/platform/logger'
import { createTestContext, type TestContext } from './context'
import { freePort } from './processes'

export interface RunningService {
  ctx: TestContext
  api: RunningApi
  baseUrl: string
  /** The API's log lines (to explain a failure). */
  logs: string[]
  close(): Promise<void>
}

export async function startService(env: Record<string, string> = {}): Promise<RunningService> {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const dataDir = await mkdtemp(join(tmpdir(), 'service-'))
  const ctx = await createTestContext({ PORT: String(port), PUBLIC_URL: baseUrl, DATA_DIR: dataDir, ...env })
  const logs: string[] = []
  const api = await startApi(
    ctx.config,
    createLogger('info', {}, (line) => logs.push(line)),
  )
  return {
    ctx,
    api,
    baseUrl,
    logs,
    async close() {
      await api.close(5000)
      await ctx.close()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}
