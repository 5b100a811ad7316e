/**
 * Real resources for the operations of the document, made through the API itself: for a path
 * parameter `{x_id}` the creating operation is the POST on the path just before it
 * (`/v1/properties/{property_id}` ← `POST /v1/properties`), called with the document's example
 * body; the new id is the answer's `id` or `x_id`. A resource that has a `.../publish`
 * operation is published, so reads can see it.
 */
import { sql } from 'drizzle-orm'
import { call, type TestContext } from '../helpers/context'
import { exampleOf, fillPath, type Json, type Operation } from './openapi-schema'
import { insertEndpoint } from '../../db/queries/webhooks'
import { sealSecret } from '../../shared/platform/secret-box'
import { webhookSecretContext } from '../../shared/webhooks/delivery'
import { generateWebhookSecret } from '../../shared/webhooks/signature'
import { relayAll } from '../helpers/relay'

export class Resources {
  private made = new Map<string, Promise<number | string>>()

  constructor(
    private ctx: TestContext,
    private doc: Json,
    private ops: Operation[],
    readonly apiKey: string,
    private seed = 1,
  ) {}

  /** Values for every path parameter of `path`, creating what is missing (parents first). */
  async paramsFor(path: string): Promise<Record<string, number | string>> {
    const values: Record<string, number | string> = {}
    for (const m of path.matchAll(/\{([^}]+)\}/g)) {
      const name = m[1]
      const prefix = path.slice(0, m.index! - 1)
      values[name] = await this.resource(name, prefix, values)
    }
    return values
  }

  private resource(name: string, collection: string, parents: Record<string, number | string>): Promise<number | string> {
    const key = `${name}@${fillPath(collection, parents)}`
    let p = this.made.get(key)
    if (!p) {
      p = this.create(name, collection, { ...parents })
      this.made.set(key, p)
    }
    return p
  }

  private async create(name: string, collection: string, parents: Record<string, number | string>): Promise<number | string> {
    if (name === 'event_id') return this.makeEvent()
    if (name === 'endpoint_id') return this.makeWebhookEndpoint()
    if (name === 'image_id') return this.makeImage(Number(parents.property_id))
    const creator = this.ops.find((o) => o.method === 'POST' && o.path === collection)
    if (!creator) throw new Error(`no POST ${collection} in the document to create a {${name}}; teach test/fuzz/resources.ts how to make one`)
    const body = creator.body ? exampleOf(this.doc, creator.body.schema, this.seed) : undefined
    const res = await call(this.ctx.app, 'POST', fillPath(collection, parents), { key: this.apiKey, body })
    // The example made earlier by someone else (a duplicate contact): that row serves as well.
    if (res.status === 409 && typeof res.body?.existing_id === 'number') return res.body.existing_id
    if (res.status >= 300) throw new Error(`${creator.operationId} with its example answered ${res.status}: ${res.text}`)
    const id = res.body?.[name] ?? res.body?.id ?? res.body?.data?.[name] ?? res.body?.data?.id
    if (id === undefined) throw new Error(`${creator.operationId} answered without an id or ${name}: ${res.text}`)
    const resourcePath = `${collection}/{${name}}`
    if (this.ops.some((o) => o.method === 'POST' && o.path === `${resourcePath}/publish`)) {
      const pub = await call(this.ctx.app, 'POST', fillPath(`${resourcePath}/publish`, { ...parents, [name]: id }), { key: this.apiKey })
      if (pub.status !== 200) throw new Error(`publishing ${name} ${id} answered ${pub.status}: ${pub.text}`)
    }
    return id
  }

  /**
   * Events are recorded by changes, never created by a POST of their own (contract §10.1): a
   * lead made through the API gives one, sequenced by the relay and read back from GET /events.
   */
  private async makeEvent(): Promise<string> {
    const lead = await call(this.ctx.app, 'POST', '/v1/leads', {
      key: this.apiKey,
      body: { name: 'Evento Fuzz', phone: `+3461${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}` },
    })
    if (lead.status !== 201) throw new Error(`making an event: POST /v1/leads answered ${lead.status}: ${lead.text}`)
    await relayAll(this.ctx.deps)
    const events = await call(this.ctx.app, 'GET', '/v1/events?types=lead.created&limit=1000', { key: this.apiKey })
    const event = (events.body?.data ?? []).find((e: { data: { object: { id: number } } }) => e.data.object.id === lead.body.id)
    if (!event) throw new Error(`no lead.created event for lead ${lead.body.id}: ${events.text}`)
    return event.id
  }

  /**
   * Images are made by uploads and imports through the workers (contract §5, §9.2), which the
   * generated tests do not run: a ready image row is written as the image-watermark worker leaves
   * it (its public copy is not needed to manage it).
   */
  private async makeImage(propertyId: number): Promise<string> {
    const me = await call(this.ctx.app, 'GET', '/v1/me', { key: this.apiKey })
    const businessId = me.body.data.business.id as number
    const hex = () => crypto.randomUUID().replace(/-/g, '')
    const key = `images/${hex()}.jpg`
    const [row] = await this.ctx.deps.database.db.execute<{ id: string }>(sql`
      insert into property_images (business_id, property_id, original_key, public_key, public_url, position, is_primary, state, width, height)
      values (${businessId}, ${propertyId}, ${`originals/${hex()}`}, ${key}, ${`${this.ctx.config.cdnUrl}/${key}`},
        coalesce((select max(position) from property_images where property_id = ${propertyId}), 0) + 1,
        not exists (select 1 from property_images where property_id = ${propertyId} and is_primary), 'ready', 640, 480)
      returning id`)
    return row.id
  }

  /**
   * A webhook endpoint on loopback, written as POST /webhook_endpoints writes it: the document's
   * example URL does not resolve here, and loopback is refused without WEBHOOK_ALLOW_HOSTS.
   * Nothing is delivered to it: no worker runs in the generated tests.
   */
  private async makeWebhookEndpoint(): Promise<number> {
    const me = await call(this.ctx.app, 'GET', '/v1/me', { key: this.apiKey })
    const businessId = me.body.data.business.id as number
    const row = await insertEndpoint(this.ctx.deps.database.db, {
      businessId,
      url: 'http://127.0.0.1:9/fuzz',
      description: null,
      enabledEvents: ['*'],
      eventScopes: ['leads:read', 'properties:read', 'properties:write'],
      secretSealed: sealSecret(this.ctx.config.appSecret, generateWebhookSecret(), webhookSecretContext(businessId)),
    })
    return row.id
  }
}

/**
 * Every row of every table that has a `business_id` column, for one business, as text: two
 * equal snapshots mean nothing of that business changed. `last_used_at` of keys is left out
 * (it records use, not data).
 */
export async function snapshotBusiness(ctx: TestContext, businessId: number): Promise<Record<string, string>> {
  const db = ctx.deps.database.db
  const tables = await db.execute<{ table_name: string }>(sql`
    select table_name from information_schema.columns
    where table_schema = 'public' and column_name = 'business_id' order by table_name`)
  const out: Record<string, string> = {}
  for (const { table_name } of tables) {
    const rows = await db.execute<{ doc: string | null }>(sql`
      select coalesce(json_agg(to_jsonb(t) - 'last_used_at' order by to_jsonb(t)::text), '[]')::text as doc
      from ${sql.identifier(table_name)} t where t.business_id = ${businessId}`)
    out[table_name] = rows[0]?.doc ?? '[]'
  }
  const business = await db.execute<{ doc: string }>(sql`select to_jsonb(b)::text as doc from businesses b where id = ${businessId}`)
  out.businesses = business[0]?.doc ?? ''
  return out
}
