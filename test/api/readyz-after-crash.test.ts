/**
 * Crash handlers, the readiness half: once the process has crashed (shared/platform/lifecycle.ts)
 * `/readyz` is a 503 naming it, whatever PostgreSQL and Redis say. The crash state is passed in,
 * so the test runner itself does not have to crash (test/process/crash-handlers.test.ts does that
 * with real processes).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { httpPlugin } from '../../api/plugins/http'
import { opsRoutes } from '../../api/routes/ops'
import { processCrash } from '../../shared/platform/lifecycle'
import { call, createTestContext, type TestContext } from '../helpers/context'

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

test('a healthy process is ready; after a crash /readyz is 503 with checks.process "crashed"', async () => {
  expect(processCrash()).toBeUndefined()
  expect((await call(ctx.app, 'GET', '/readyz')).status).toBe(200)
  let crash: string | undefined
  const app = new Elysia().use(httpPlugin(ctx.deps)).use(opsRoutes(ctx.deps, () => crash)) as unknown as typeof ctx.app
  expect((await call(app, 'GET', '/readyz')).status).toBe(200)
  crash = 'unhandled rejection'
  const res = await call(app, 'GET', '/readyz')
  expect(res.status, res.text).toBe(503)
  expect(res.body).toEqual({ status: 'unavailable', checks: { postgres: 'ok', redis: 'ok', process: 'crashed' } })
  expect(res.headers.get('cache-control')).toBe('no-store')
})
