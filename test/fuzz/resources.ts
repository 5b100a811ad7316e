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

export class Resources {
  private made = new Map<string, Promise<number | string>>()

  constructor(private ctx: TestContext, private doc: Json, private ops: Operation[], readonly apiKey: string, private seed = 1) {}

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
    if (!p) this.made.set(key, (p = this.create(name, collection, { ...parents })))
    return p
  }

  private async create(name: string, collection: string, parents: Record<string, number | string>): Promise<number | string> {
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
