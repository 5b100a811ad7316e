import { afterAll, beforeAll, expect, test } from 'bun:test'
import { OPERATIONS } from '../../shared/access/operations'
import { createTestContext, type TestContext } from '../helpers/context'

// The operations table is the one list of public operations: the app serves exactly its rows,
// and the OpenAPI document takes operationId and scope from it.
let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

test('every /v1 route is a row of the operations table, and every row is served', () => {
  const served = ctx.app.routes.filter((r) => r.path.startsWith('/v1/')).map((r) => `${r.method} ${r.path}`)
  const rows = Object.values(OPERATIONS).map((op) => `${op.method} ${op.path}`)
  for (const route of served) expect(rows, route).toContain(route)
  for (const [id, op] of Object.entries(OPERATIONS)) expect(served, id).toContain(`${op.method} ${op.path}`)
})

test('the OpenAPI document names each operation and its scope from the table', async () => {
  const doc = (await (await ctx.app.handle(new Request('http://localhost/openapi.json'))).json()) as any
  for (const [id, op] of Object.entries(OPERATIONS)) {
    const path = op.path.replace(/:(\w+)/g, '{$1}')
    const documented = doc.paths[path]?.[op.method.toLowerCase()]
    expect(documented?.operationId, id).toBe(id)
    expect(documented['x-required-scope'], id).toBe(op.scope === 'any' || op.scope === 'none' ? null : op.scope)
  }
})
