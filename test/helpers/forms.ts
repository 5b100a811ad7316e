/** Publishable keys and the requests a landing page sends (contract §16), for the tests of §16. */
import { sql } from 'drizzle-orm'
import { createPublishableKey } from '../../shared/access/accounts'
import { parseRate } from '../../shared/access/publishable'
import type { TestContext } from './context'

export const LANDING = 'https://landing.example.com'

export async function publishableKey(ctx: TestContext, businessId: number, options: { origins?: string[]; ratePerIp?: string; rate?: string } = {}) {
  const created = await createPublishableKey(ctx.deps, {
    businessId,
    origins: options.origins ?? [LANDING],
    ratePerIp: parseRate(options.ratePerIp ?? '1000/min'),
    rate: parseRate(options.rate ?? '10000/min'),
    name: 'landing',
    expiresAt: null,
  })
  return { apiKey: created.api_key, keyId: created.key_id }
}

let phone = 600_000_000 + Math.floor(Math.random() * 90_000_000)
export const nextPhone = () => `+34${++phone}`

export const ingestBody = (p = nextPhone()) => ({
  id: 'sub_1',
  createdAt: '2026-11-01T10:00:00Z',
  source: 'landing',
  sourcePage: `${LANDING}/alquiler`,
  contact: { name: 'Ana Martín', phone: p },
  search: { budget: '800-1000', habs: '2' },
})

export const inquiryBody = (email = `ana.${phone++}@example.com`) => ({ contact: { name: 'Ana Martín', email }, message: '¿Sigue disponible?' })

/** application/x-www-form-urlencoded headers with an Origin, as a browser sends a form. */
export const formHeaders = (origin: string | null = LANDING): Record<string, string> => ({
  'content-type': 'application/x-www-form-urlencoded',
  ...(origin ? { origin } : {}),
})

export const form = (fields: Record<string, string | string[]>) => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(fields)) for (const v of Array.isArray(value) ? value : [value]) params.append(name, v)
  return params.toString()
}

/** What a business holds: contacts and inquiries, and the leads the ingest handed to its queue. */
export async function stored(ctx: TestContext, businessId: number): Promise<{ contacts: number; inquiries: number; ingested: number }> {
  const [row] = await ctx.deps.database.db.execute<{ contacts: number; inquiries: number }>(sql`
    select (select count(*)::int from contacts where business_id = ${businessId}) as contacts,
           (select count(*)::int from lead_inquiries where business_id = ${businessId}) as inquiries`)
  return { contacts: row.contacts, inquiries: row.inquiries, ingested: ctx.deps.ingest.stats.leads }
}
