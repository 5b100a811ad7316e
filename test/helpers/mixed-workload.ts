/**
 * A mixed workload (creates, publish, PATCH, reads, leads, ingest from many
 * clients at once) and the check that every answered write is in PostgreSQL. Through a
 * transaction-mode pooler, postgres.js's named statements once made the API answer 201 for
 * properties and leads that were never stored. Used by `bun test` (test/db/pgbouncer.test.ts)
 * and the fault harness (test/faults/pgbouncer.ts); no test-runner imports.
 */
import type postgres from 'postgres'
import { propertyBody } from './property-body'

export interface Answer {
  status: number
  body?: any
  /** A connection error or a timeout instead of an answer. */
  error?: string
}

/** One API call by client `client`: method, path, JSON body. */
export type Send = (client: number, method: string, path: string, body?: unknown) => Promise<Answer>

export interface MixedWorkloadResult {
  /** Every answer by operation, for the figures. */
  answers: { op: string; answer: Answer }[]
  /** Writes answered 2xx, by what the database must hold afterwards. */
  created: number[]
  published: number[]
  patched: Map<number, string>
  leads: number[]
  ingestPhones: string[]
}

const is2xx = (a: Answer) => a.status >= 200 && a.status < 300

/**
 * `clients` concurrent clients, each doing `rounds` rounds of: create a property, publish it,
 * PATCH its title, read it and the catalogue, create a lead, ingest a lead. Phones are unique per
 * run (`phoneBase` keeps runs apart).
 */
export async function runMixedWorkload(send: Send, options: { clients: number; rounds: number; tag: string; phoneBase: number }): Promise<MixedWorkloadResult> {
  const result: MixedWorkloadResult = { answers: [], created: [], published: [], patched: new Map(), leads: [], ingestPhones: [] }
  const call = async (client: number, op: string, method: string, path: string, body?: unknown) => {
    const answer = await send(client, method, path, body)
    result.answers.push({ op, answer })
    return answer
  }
  const phone = (n: number) => `+34${600_000_000 + options.phoneBase + n}`
  await Promise.all(
    Array.from({ length: options.clients }, async (_, client) => {
      for (let round = 0; round < options.rounds; round++) {
        const n = client * options.rounds + round
        const title = `${options.tag} ${n}`
        const created = await call(client, 'create property', 'POST', '/v1/properties', propertyBody({ title }))
        if (is2xx(created)) {
          const id = created.body.id as number
          result.created.push(id)
          if (is2xx(await call(client, 'publish', 'POST', `/v1/properties/${id}/publish`))) result.published.push(id)
          if (is2xx(await call(client, 'patch', 'PATCH', `/v1/properties/${id}`, { title: `${title} patched` }))) result.patched.set(id, `${title} patched`)
          await call(client, 'read property', 'GET', `/v1/properties/${id}`)
        }
        await call(client, 'catalogue', 'GET', '/v1/properties?limit=10')
        const lead = await call(client, 'create lead', 'POST', '/v1/leads', {
          name: `Lead ${title}`,
          phone: phone(2 * n),
          email: `lead.${options.phoneBase + n}@example.com`,
        })
        if (is2xx(lead)) result.leads.push(lead.body.id)
        const ingestPhone = phone(2 * n + 1)
        const ingested = await call(client, 'ingest', 'POST', '/v1/leads/ingest', {
          id: `${options.tag}-${n}`,
          createdAt: new Date().toISOString(),
          source: `mixed-${options.tag}`,
          sourcePage: 'https://inmobiliaria.example/alquiler/valencia',
          contact: { name: `Ingest ${title}`, phone: ingestPhone },
          search: { budget: '900-1200', habs: '2', area: 'Ruzafa' },
        })
        if (is2xx(ingested)) result.ingestPhones.push(ingestPhone)
      }
    }),
  )
  return result
}

/**
 * Non-2xx answers by operation and status with the first one's problem detail, e.g.
 * `create lead 500×3 ("Internal error", request …)`; empty when every call succeeded.
 */
export function failedAnswers(result: MixedWorkloadResult): string[] {
  const counts = new Map<string, { n: number; example: string }>()
  for (const { op, answer } of result.answers) {
    if (is2xx(answer)) continue
    const key = `${op} ${answer.error ? `error(${answer.error.slice(0, 60)})` : answer.status}`
    const seen = counts.get(key)
    if (seen) seen.n++
    else counts.set(key, { n: 1, example: JSON.stringify(answer.body ?? answer.error ?? '').slice(0, 300) })
  }
  return [...counts].map(([k, { n, example }]) => `${k}×${n} (first: ${example})`)
}

export interface MissingWrites {
  properties: number
  published: number
  patched: number
  leads: number
  ingests: number
  total: number
}

/**
 * Answered writes PostgreSQL does not hold (read through `sql`, a direct connection). Ingests
 * become leads through the lead-ingest workers: call this once their queue has drained.
 */
export async function missingWrites(sql: postgres.Sql, result: MixedWorkloadResult): Promise<MissingWrites> {
  const rows = await sql<{ id: number; title: string; published: boolean }[]>`
    select id, title, published_at is not null as published from properties where id = any(${result.created}::int[])`
  const byId = new Map(rows.map((r) => [r.id, r]))
  const leadRows = await sql<{ id: number }[]>`select id from contacts where id = any(${result.leads}::int[])`
  const ingestRows = await sql<{ phone: string }[]>`select distinct phone from contacts where phone = any(${result.ingestPhones}::text[])`
  const missing = {
    properties: result.created.filter((id) => !byId.has(id)).length,
    published: result.published.filter((id) => !byId.get(id)?.published).length,
    patched: [...result.patched].filter(([id, title]) => byId.get(id)?.title !== title).length,
    leads: result.leads.length - leadRows.length,
    ingests: result.ingestPhones.length - ingestRows.length,
  }
  return { ...missing, total: Object.values(missing).reduce((a, b) => a + b, 0) }
}
