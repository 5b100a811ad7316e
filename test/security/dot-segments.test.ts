/**
 * Contract §6 paths (§15): a path holding a `.` or `..` segment, plain or percent-encoded in any
 * case, is a 404 problem+json before any route runs. Sent on a raw socket: HTTP clients (fetch,
 * curl without --path-as-is) resolve dot segments before sending, and so does `new Request`.
 * Every operation of /openapi.json (and the routes it hides) is tried with a key holding every
 * scope, so a request that reached a route would succeed; the resources stay as they were.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { isDotSegment } from '../../api/raw-path'
import { fillPath, loadDocument, operationsOf, pathParamsOf, type Operation } from '../fuzz/openapi-schema'
import { call, seedBusiness, type SeededBusiness } from '../helpers/context'
import { createLead } from '../helpers/leads'
import { createPublished } from '../helpers/properties'
import { rawRequest, type RawAnswer } from '../helpers/raw-http'
import { startService, type RunningService } from '../helpers/running-service'

/** `.` and `..` as a client can write them: plain, percent-encoded in either case, mixed. */
const SPELLINGS = ['.', '..', '%2e', '%2E', '%2e%2e', '%2E%2E', '%2e%2E', '.%2e', '%2e.', '.%2E', '%2E.', '..\\', '\\..', '%2e%2e%5c', '%5c%2e%2e']

/** One request with its target written byte for byte (never resolved), on a connection the server closes after it. */
function raw(port: number, method: string, target: string, headers: Record<string, string>, body = ''): Promise<RawAnswer> {
  const all = {
    host: `127.0.0.1:${port}`,
    connection: 'close',
    ...headers,
    ...(body ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}),
  }
  return rawRequest(
    port,
    `${method} ${target} HTTP/1.1\r\n${Object.entries(all)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n`,
    body,
  )
}

let service: RunningService
let biz: SeededBusiness
let ops: Operation[]
let propertyId: number
let leadId: number
let port: number

beforeAll(async () => {
  service = await startService()
  port = Number(new URL(service.baseUrl).port)
  biz = await seedBusiness(service.ctx)
  ops = operationsOf(await loadDocument(service.ctx.app))
  propertyId = await createPublished(service.ctx, biz.apiKey)
  leadId = await createLead(service.ctx, biz.apiKey)
})

afterAll(async () => {
  await service?.close()
})

/** Every operation's path with its ids filled with this business's resources (others: 1). */
function concretePath(op: Operation): string {
  const values: Record<string, string | number> = {}
  for (const name of pathParamsOf(op)) values[name] = name === 'property_id' ? propertyId : name === 'lead_id' ? leadId : 1
  return fillPath(op.path, values)
}

/** The targets that resolve to `path` or one of its parents through a dot segment. */
function dotTargets(path: string): string[] {
  const segments = path.split('/').filter(Boolean)
  const targets: string[] = []
  for (const dot of SPELLINGS) {
    targets.push(`${path}/${dot}`, `${path}/x/${dot}`, `${path}/${dot}/`)
    // In the middle: `/v1/properties/%2e/4` resolves to `/v1/properties/4`.
    const i = Math.max(1, segments.length - 1)
    targets.push(`/${[...segments.slice(0, i), dot, ...segments.slice(i)].join('/')}`)
  }
  return targets
}

describe('isDotSegment', () => {
  test('takes the decoded forms the URL parser resolves, and nothing else', () => {
    for (const s of ['.', '..', 'a\\..', '..\\', '\\']) expect(isDotSegment(s)).toBe(true)
    for (const s of ['...', '.a', 'a.', '.jpg', 'x.y', '%2e', 'a/..']) expect(isDotSegment(s)).toBe(false)
  })
})

describe('a dot segment in the path', () => {
  test('every operation of /openapi.json, every spelling: 404 problem+json, with the usual headers', async () => {
    expect(ops.length).toBeGreaterThan(30)
    const wrong: string[] = []
    for (const op of ops) {
      for (const target of dotTargets(concretePath(op))) {
        const body = ['POST', 'PATCH', 'PUT'].includes(op.method.toUpperCase()) ? '{}' : ''
        const answer = await raw(port, op.method.toUpperCase(), target, { 'x-api-key': biz.apiKey }, body)
        const problem = answer.headers['content-type']?.startsWith('application/problem+json')
        if (
          answer.status !== 404 ||
          !problem ||
          !answer.headers['x-request-id'] ||
          answer.headers['cache-control'] !== 'no-store' ||
          answer.headers['x-content-type-options'] !== 'nosniff'
        ) {
          wrong.push(`${op.method.toUpperCase()} ${target} -> ${answer.status} ${answer.body.slice(0, 120)}`)
        }
      }
    }
    expect(wrong, wrong.slice(0, 20).join('\n')).toEqual([])
  }, 120_000)

  test('the resources a dot segment would have reached are untouched', async () => {
    const key = { 'x-api-key': biz.apiKey }
    // The three requests found destroying data: the listing, the lead (§13 erasure), the listing's fields.
    expect((await raw(port, 'DELETE', `/v1/properties/${propertyId}/videos/%2e%2e`, key)).status).toBe(404)
    expect((await raw(port, 'DELETE', `/v1/leads/${leadId}/inquiries/%2e%2e`, key)).status).toBe(404)
    expect((await raw(port, 'PATCH', `/v1/properties/${propertyId}/images/%2E%2E`, key, JSON.stringify({ title: 'Cambiado' }))).status).toBe(404)
    const property = await call(service.ctx.app, 'GET', `/v1/properties/${propertyId}/private`, { key: biz.apiKey })
    expect(property.status, property.text).toBe(200)
    expect(property.body.data.title).not.toBe('Cambiado')
    const lead = await call(service.ctx.app, 'GET', `/v1/leads/${leadId}`, { key: biz.apiKey })
    expect(lead.status, lead.text).toBe(200)
  })

  test('outside /v1 too (no key needed): ops, documents, storage, feeds', async () => {
    for (const target of [
      '/healthz/%2e%2e/readyz',
      '/docs/..',
      '/openapi.json/.%2E',
      '/cdn/images/%2e%2e/x.jpg',
      '/storage/originals/%2e%2e',
      '/feeds/x/%2e%2e',
      '/%2e%2e/healthz',
      '/v1/%2E%2E/healthz',
    ]) {
      const answer = await raw(port, 'GET', target, {})
      expect(answer.status, `${target}: ${answer.body}`).toBe(404)
      expect(answer.headers['content-type']).toStartWith('application/problem+json')
    }
  })

  test('an empty segment or a path deeper than any route is not resolved either', async () => {
    for (const target of [`/v1/leads//%2e%2e/${leadId}`, `/v1/leads/${leadId}//%2e%2e/`, `/v1/properties/${propertyId}${'/a'.repeat(20)}${'/..'.repeat(20)}`]) {
      const answer = await raw(port, 'DELETE', target, { 'x-api-key': biz.apiKey })
      expect(answer.status, `${target}: ${answer.body}`).toBe(404)
    }
    expect((await call(service.ctx.app, 'GET', `/v1/leads/${leadId}`, { key: biz.apiKey })).status).toBe(200)
  })

  test('the same paths without a dot segment are served as before', async () => {
    const key = { 'x-api-key': biz.apiKey }
    expect((await raw(port, 'GET', `/v1/properties/${propertyId}`, key)).status).toBe(200)
    expect((await raw(port, 'GET', `/v1/properties/${propertyId}/`, key)).status).toBe(200)
    expect((await raw(port, 'GET', `/v1/leads/%3${String(leadId)[0]}${String(leadId).slice(1)}`, key)).status).toBe(200)
    expect((await raw(port, 'GET', '/v1/properties?q=a..b', key)).status).toBe(200)
    expect((await raw(port, 'GET', '/healthz', {})).status).toBe(200)
    expect((await raw(port, 'GET', '/', {})).status).toBe(404)
  })

  test('the log names no route for a refused path', async () => {
    const before = service.logs.length
    await raw(port, 'DELETE', `/v1/properties/${propertyId}/videos/%2e%2e`, { 'x-api-key': biz.apiKey })
    const line = service.logs
      .slice(before)
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'request' && l.status === 404)
    expect(line?.route).toBe('unmatched')
  })
})
