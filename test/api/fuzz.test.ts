/**
 * Hostile input, generated: requests derived from the served OpenAPI document and
 * mutated (test/fuzz/requests.ts), FUZZ_CASES in total (default 10,000) spread evenly over every
 * operation, with a printed seed (replay with FUZZ_SEED=<seed>). Every answer must be a status
 * the operation documents, with the documented content type and a body matching the documented
 * schema; no 5xx except the documented ingest budget 500; the service is still ready afterwards.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { loadDocument, operationsOf, validate, type Json, type Operation } from '../fuzz/openapi-schema'
import { requestsFor, type FuzzRequest } from '../fuzz/requests'
import { Resources } from '../fuzz/resources'

const TOTAL = Number(process.env.FUZZ_CASES ?? 10_000)
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31)

let ctx: TestContext
let doc: Json
let ops: Operation[]
let biz: SeededBusiness
let resources: Resources

beforeAll(async () => {
  ctx = await createTestContext()
  doc = await loadDocument(ctx.app)
  // Deletes last, children before their parents: a deleted property (or image, video) would turn
  // every later operation on the shared seeded rows into a 404 and leave their code unexercised.
  const rank = (o: Operation) => (o.method === 'DELETE' ? 1000 - o.path.split('/').length : 0)
  ops = operationsOf(doc).sort((a, b) => rank(a) - rank(b))
  biz = await seedBusiness(ctx)
  resources = new Resources(ctx, doc, ops, biz.apiKey)
  console.log(`fuzz: ${TOTAL} cases over ${ops.length} operations, seed ${SEED} (replay: FUZZ_SEED=${SEED} bun test test/api/fuzz.test.ts)`)
})
afterAll(() => ctx.close())

/** The one documented 5xx (api-spec §4.11 rule 5, contract §8). */
const documentedServerError = (op: Operation, status: number, body: Json) =>
  op.operationId === 'ingestRentalLead' && status === 500 && body?.code === 'invalid_budget'

/** What is wrong with an answer, by the operation's own documentation (empty when nothing). */
export function problemsOf(op: Operation, status: number, headers: Headers, text: string): string[] {
  const problems: string[] = []
  const documented = op.responses[String(status)] ?? op.responses.default
  let body: Json
  try {
    body = text === '' ? undefined : JSON.parse(text)
  } catch {
    body = undefined
  }
  if (status >= 500 && !documentedServerError(op, status, body)) problems.push(`status ${status}`)
  if (!documented) return [...problems, `status ${status} is not documented`]
  if (!headers.get('x-request-id')) problems.push('no X-Request-Id')
  if (headers.get('cache-control') !== 'no-store') problems.push(`Cache-Control ${headers.get('cache-control')}`)
  const content = documented.content ?? {}
  const types = Object.keys(content)
  if (types.length === 0) return problems
  const type = (headers.get('content-type') ?? '').split(';')[0].trim()
  const media = types.find((t) => t === type)
  if (!media) return [...problems, `content type "${type}", documented ${types.join(', ')}`]
  if (body === undefined) return [...problems, `body is not JSON: ${text.slice(0, 100)}`]
  const errors = validate(doc, content[media].schema, body)
  if (errors.length) problems.push(`body does not match the ${status} schema: ${errors.slice(0, 3).join('; ')}`)
  return problems
}

async function send(req: FuzzRequest): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await ctx.app.handle(new Request(req.url, { method: req.method, headers: req.headers, body: req.body }))
  return { status: res.status, headers: res.headers, text: await res.text() }
}

describe('hostile input generated from /openapi.json', () => {
  test(`${TOTAL} mutated requests: documented statuses, content types and bodies; no undocumented 5xx`, async () => {
    const perOperation = Math.ceil(TOTAL / ops.length)
    const failures: string[] = []
    const statuses: Record<string, Record<number, number>> = {}
    // Every seeded row first, so the fuzzing of one operation cannot get in the way of another's.
    const idsByPath = new Map<string, Record<string, number | string>>()
    for (const op of ops) idsByPath.set(op.path, await resources.paramsFor(op.path))
    const allIds = Object.assign({}, ...idsByPath.values()) as Record<string, number | string>
    // Values the rules beyond the schema want (real rows, parseable phones and dates), so valid
    // requests get past validation into the database code; the mutations cover the rest.
    const overrides: Record<string, fc.Arbitrary<unknown>> = {
      ...Object.fromEntries(Object.entries(allIds).map(([name, id]) => [name, fc.constant(id)])),
      phone: fc.integer({ min: 600_000_000, max: 699_999_999 }).map((n) => `+34${n}`),
      email: fc.emailAddress().filter((e) => /^[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}$/i.test(e)),
      updated_since: fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
    }
    for (const op of ops) {
      const ids = idsByPath.get(op.path)!
      const arbitrary = requestsFor(doc, op, { ids: { ...allIds, ...ids }, apiKey: biz.apiKey, overrides })
      const seen: Record<number, number> = {}
      statuses[op.operationId] = seen
      await fc.assert(
        fc.asyncProperty(arbitrary, async (req) => {
          const res = await send(req)
          seen[res.status] = (seen[res.status] ?? 0) + 1
          const problems = problemsOf(op, res.status, res.headers, res.text)
          // Collected rather than thrown, so one run shows every kind of failure at once.
          if (problems.length && failures.length < 200) {
            failures.push(
              `${op.operationId} [${req.mutation}] ${req.method} ${req.url.slice(0, 200)} ` +
                `→ ${res.status} ${res.text.slice(0, 300)}\n    ${problems.join('\n    ')}`,
            )
          }
        }),
        { seed: SEED + ops.indexOf(op), numRuns: perOperation },
      )
    }
    console.log(`fuzz statuses per operation: ${JSON.stringify(statuses)}`)
    expect(failures, `seed ${SEED}:\n${failures.join('\n')}`).toEqual([])
    const ready = await ctx.app.handle(new Request('http://localhost/readyz'))
    expect(ready.status).toBe(200)
  }, 180_000)
})
