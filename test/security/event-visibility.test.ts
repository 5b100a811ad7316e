/**
 * Events by scope (contract §10.1 revised, §15): `property.created`, `property.updated`,
 * `image.*` and `video.*` carry private fields (drafts, exact addresses) and need
 * `properties:write` besides `properties:read`; a `properties:read` key sees
 * `property.published`, `property.unpublished` and `property.deleted` only. GET /events,
 * GET /events/{id}, webhook subscriptions (an exact type the key cannot read is a 422; a
 * wildcard delivers only what the key that chose it can read), fan-out, redelivery and the
 * delivery runner all hold to it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { recordEvents } from '../../shared/events/record'
import { runEndpoint } from '../../shared/webhooks/delivery'
import { relayAll } from '../helpers/relay'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { propertyBody } from '../helpers/properties'
import { createEndpoint, deliveriesOfEndpoint, startReceiver, type Receiver } from '../helpers/webhooks'

const PUBLIC_TYPES = ['property.published', 'property.unpublished', 'property.deleted']
const PRIVATE_TYPES = ['property.created', 'property.updated', 'image.ready', 'image.failed', 'video.ready', 'video.failed']

let ctx: TestContext
let biz: SeededBusiness
let receiver: Receiver
let readKey: string
let writeKey: string
let writeOnlyKey: string
/** The business's events, one of each property-family type, by type. */
const eventIds = new Map<string, string>()

beforeAll(async () => {
  ctx = await createTestContext({ WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_BACKOFF_BASE_MS: '60000' })
  receiver = startReceiver()
  biz = await seedBusiness(ctx)
  readKey = (await biz.key(['properties:read', 'leads:read', 'webhooks:write'])).apiKey
  writeKey = (await biz.key(['properties:read', 'properties:write', 'leads:read', 'webhooks:write'])).apiKey
  writeOnlyKey = (await biz.key(['properties:write'])).apiKey
})
afterAll(async () => {
  receiver?.stop()
  await ctx?.close()
})

/** One event of every property-family type, the hidden draft's exact address in the private ones. */
async function recordEveryType(b: SeededBusiness): Promise<void> {
  const location = {
    city: 'Valencia',
    address: 'Calle Secreta 7',
    postal_code: '46001',
    coordinates: { latitude: 39.4712, longitude: -0.3768 },
    visibility: 'hidden',
  }
  const id = (await call(ctx.app, 'POST', '/v1/properties', { key: b.apiKey, body: propertyBody({ location }) })).body.id
  expect((await call(ctx.app, 'PATCH', `/v1/properties/${id}`, { key: b.apiKey, body: { title: 'Otro' } })).status).toBe(200)
  await recordEvents(ctx.deps.database.db, b.id, [
    { type: 'image.ready', object: { id: 'img_1', property_id: id, state: 'ready', url: 'https://cdn.example/x.jpg' } },
    { type: 'image.failed', object: { id: 'img_2', property_id: id, state: 'failed', error: 'x' } },
    { type: 'video.ready', object: { id: 'vid_1', property_id: id, state: 'ready' } },
    { type: 'video.failed', object: { id: 'vid_2', property_id: id, state: 'failed' } },
  ])
  expect((await call(ctx.app, 'POST', `/v1/properties/${id}/publish`, { key: b.apiKey })).status).toBe(200)
  expect((await call(ctx.app, 'POST', `/v1/properties/${id}/unpublish`, { key: b.apiKey })).status).toBe(200)
  expect((await call(ctx.app, 'DELETE', `/v1/properties/${id}`, { key: b.apiKey })).status).toBe(200)
  await relayAll(ctx.deps)
}

const listTypes = async (key: string, query = '') => {
  const res = await call(ctx.app, 'GET', `/v1/events${query}`, { key })
  expect(res.status, res.text).toBe(200)
  return (res.body.data as any[]).map((e) => e.type)
}

describe('GET /events and GET /events/{id}', () => {
  beforeAll(async () => {
    await recordEveryType(biz)
    const res = await call(ctx.app, 'GET', '/v1/events', { key: biz.apiKey })
    for (const e of res.body.data) eventIds.set(e.type, e.id)
  })

  test('a properties:read key sees published, unpublished and deleted only; no private field reaches it', async () => {
    expect(await listTypes(readKey)).toEqual(PUBLIC_TYPES)
    expect(await listTypes(readKey, '?types=property.*,image.*,video.*')).toEqual(PUBLIC_TYPES)
    expect(await listTypes(readKey, '?types=property.created,property.updated,image.ready')).toEqual([])
    const text = (await call(ctx.app, 'GET', '/v1/events', { key: readKey })).text
    expect(text).not.toContain('Calle Secreta')
    expect(text).not.toContain('39.4712')
  })

  test('properties:read with properties:write sees every property event', async () => {
    expect((await listTypes(writeKey)).sort()).toEqual([...PUBLIC_TYPES, ...PRIVATE_TYPES].sort())
    expect(await listTypes(writeKey, '?types=image.*')).toEqual(['image.ready', 'image.failed'])
  })

  test('properties:write without properties:read sees none (as before)', async () => {
    expect(await listTypes(writeOnlyKey)).toEqual([])
  })

  test('GET /events/{id} of an event the key cannot read is a 404', async () => {
    for (const type of PRIVATE_TYPES) {
      const res = await call(ctx.app, 'GET', `/v1/events/${eventIds.get(type)}`, { key: readKey })
      expect(res.status, type).toBe(404)
      expect((await call(ctx.app, 'GET', `/v1/events/${eventIds.get(type)}`, { key: writeKey })).status, type).toBe(200)
    }
    for (const type of PUBLIC_TYPES) expect((await call(ctx.app, 'GET', `/v1/events/${eventIds.get(type)}`, { key: readKey })).status, type).toBe(200)
  })
})

describe('webhook endpoints (contract §15 §10.2)', () => {
  const create = (key: string, enabled_events: string[]) =>
    call(ctx.app, 'POST', '/v1/webhook_endpoints', { key, body: { url: receiver.url('/x'), enabled_events } })

  test('an exact type the key cannot read is a 422 on enabled_events, at create and PATCH; wildcards are accepted', async () => {
    for (const events of [['property.created'], ['property.updated'], ['image.ready'], ['video.failed'], ['property.published', 'image.failed']]) {
      const res = await create(readKey, events)
      expect(res.status, events.join()).toBe(422)
      expect(res.body.errors[0].loc).toEqual(['body', 'enabled_events'])
      expect(res.body.errors[0].msg).toContain('properties:write')
    }
    for (const events of [['property.published', 'property.deleted'], ['property.*'], ['*'], ['image.*']])
      expect((await create(readKey, events)).status, events.join()).toBe(201)
    const id = (await create(readKey, ['property.*'])).body.data.id
    const patched = await call(ctx.app, 'PATCH', `/v1/webhook_endpoints/${id}`, { key: readKey, body: { enabled_events: ['property.updated'] } })
    expect(patched.status).toBe(422)
    expect(patched.body.errors[0].loc).toEqual(['body', 'enabled_events'])
    expect((await create(writeKey, ['property.created', 'image.ready'])).status).toBe(201)
  })

  test('a wildcard delivers only the types the key that chose it can read', async () => {
    const b = await seedBusiness(ctx)
    const partner = (await b.key(['properties:read', 'webhooks:write'])).apiKey
    const owner = (await b.key(['properties:read', 'properties:write', 'leads:read', 'webhooks:write'])).apiKey
    const readEndpoint = await createEndpoint(ctx, partner, receiver.url(`/read-${b.id}`), ['property.*', 'image.*', 'video.*'])
    const fullEndpoint = await createEndpoint(ctx, owner, receiver.url(`/full-${b.id}`), ['*'])
    await recordEveryType(b)
    const typesOf = async (endpointId: number) => {
      const rows = await ctx.deps.database.db.execute<{ type: string }>(
        sql`select e.type from webhook_deliveries d join events e on e.id = d.event_id where d.endpoint_id = ${endpointId} order by e.sequence`,
      )
      return [...rows].map((r) => r.type)
    }
    expect(await typesOf(readEndpoint.id)).toEqual(PUBLIC_TYPES)
    expect((await typesOf(fullEndpoint.id)).sort()).toEqual([...PUBLIC_TYPES, ...PRIVATE_TYPES].sort())
    await runEndpoint(ctx.deps, readEndpoint.id)
    const bodies = receiver.at(`/read-${b.id}`).map((r) => JSON.parse(r.body).type)
    expect(bodies.sort()).toEqual([...PUBLIC_TYPES].sort())
    expect(
      receiver
        .at(`/read-${b.id}`)
        .map((r) => r.body)
        .join(''),
    ).not.toContain('Calle Secreta')
  })

  test('a URL changed by a key that reads less narrows what the endpoint gets', async () => {
    const b = await seedBusiness(ctx)
    const partner = (await b.key(['properties:read', 'webhooks:write'])).apiKey
    const owner = (await b.key(['properties:read', 'properties:write', 'webhooks:write'])).apiKey
    const endpoint = await createEndpoint(ctx, owner, receiver.url(`/crm-${b.id}`), ['property.*'])
    const moved = await call(ctx.app, 'PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { key: partner, body: { url: receiver.url(`/partner-${b.id}`) } })
    expect(moved.status, moved.text).toBe(200)
    await recordEveryType(b)
    const rows = await ctx.deps.database.db.execute<{ type: string }>(
      sql`select e.type from webhook_deliveries d join events e on e.id = d.event_id where d.endpoint_id = ${endpoint.id} order by e.sequence`,
    )
    expect([...rows].map((r) => r.type)).toEqual(PUBLIC_TYPES)
    // The owner choosing the subscription again makes it the owner's.
    expect((await call(ctx.app, 'PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { key: owner, body: { enabled_events: ['property.*'] } })).status).toBe(200)
    await recordEveryType(b)
    const after = await ctx.deps.database.db.execute<{ n: number }>(sql`select count(*)::int as n from webhook_deliveries d join events e on e.id = d.event_id
        where d.endpoint_id = ${endpoint.id} and e.type = 'property.created'`)
    expect(after[0].n).toBe(1)
  })

  test('redelivering an event the endpoint cannot read is a 422 on endpoint_id', async () => {
    const endpoint = await createEndpoint(ctx, readKey, receiver.url('/redeliver'), ['property.*'])
    const res = await call(ctx.app, 'POST', `/v1/events/${eventIds.get('property.created')}/redeliver`, { key: writeKey, body: { endpoint_id: endpoint.id } })
    expect(res.status, res.text).toBe(422)
    expect(res.body.errors[0].loc).toEqual(['body', 'endpoint_id'])
    expect(
      (await call(ctx.app, 'POST', `/v1/events/${eventIds.get('property.published')}/redeliver`, { key: writeKey, body: { endpoint_id: endpoint.id } })).status,
    ).toBe(202)
  })

  test('a pending delivery of a type the endpoint cannot read is cancelled, never sent', async () => {
    const endpoint = await createEndpoint(ctx, readKey, receiver.url('/stale'), ['property.*'])
    // As a delivery made before the rule (or before the endpoint's subscription changed) is left.
    await ctx.deps.database.db.execute(sql`insert into webhook_deliveries (business_id, endpoint_id, event_id, next_attempt_at)
        values (${biz.id}, ${endpoint.id}, ${eventIds.get('property.created')}, now())`)
    await runEndpoint(ctx.deps, endpoint.id)
    expect(receiver.at('/stale')).toEqual([])
    expect((await deliveriesOfEndpoint(ctx, endpoint.id)).map((d) => d.state)).toEqual(['cancelled'])
  })
})

describe('the OpenAPI document states the rule', () => {
  test('the events routes and enabled_events say which scope each type needs', async () => {
    const doc = JSON.parse((await call(ctx.app, 'GET', '/openapi.json')).text)
    for (const [path, method] of [
      ['/v1/events', 'get'],
      ['/v1/events/{event_id}', 'get'],
    ]) {
      expect(doc.paths[path][method].description, path).toContain('properties:write')
      expect(doc.paths[path][method].description, path).toContain('property.published')
    }
    const enabled = JSON.stringify(doc.components.schemas.WebhookEndpointCreateRequest.properties.enabled_events)
    expect(enabled).toContain('properties:write')
    expect(enabled).toContain('wildcard')
  })
})
