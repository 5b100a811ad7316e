/** Lead fixtures: create bodies, ingest payloads, and DB reads for the lead tests. */
import { expect } from 'bun:test'
import { sql } from 'drizzle-orm'
import { randomInt } from 'node:crypto'
import { call, type TestContext } from './context'

/** A valid Spanish mobile number, unique enough per call (E.164). */
export function uniquePhone(): string {
  return `+346${String(randomInt(0, 100_000_000)).padStart(8, '0')}`
}

export function leadBody(overrides: Record<string, unknown> = {}): Record<string, any> {
  return { name: 'Lucía Martín', phone: uniquePhone(), email: `lucia.${randomInt(0, 1e9)}@example.com`, ...overrides }
}

export async function createLead(ctx: TestContext, key: string, overrides: Record<string, unknown> = {}): Promise<number> {
  const res = await call(ctx.app, 'POST', '/v1/leads', { key, body: leadBody(overrides) })
  expect(res.status, res.text).toBe(201)
  return res.body.id
}

export function ingestBody(overrides: { contact?: Record<string, unknown>; search?: Record<string, unknown>; [k: string]: unknown } = {}): Record<string, any> {
  const { contact, search, ...top } = overrides
  return {
    id: `sub_${randomInt(0, 1e9)}`,
    createdAt: '2026-11-01T10:00:00Z',
    source: 'landing-alquiler',
    sourcePage: 'https://example.com/alquiler-valencia',
    contact: { name: 'Lucía Martín', phone: uniquePhone(), ...contact },
    search: { budget: '800-1100', habs: '2', location: { name: 'Valencia' }, ...search },
    ...top,
  }
}

export async function contactsOf(ctx: TestContext, businessId: number): Promise<any[]> {
  return ctx.deps.database.db.execute(sql`select * from contacts where business_id = ${businessId} order by id`) as unknown as Promise<any[]>
}
