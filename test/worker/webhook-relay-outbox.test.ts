/**
 * The relay and the outbox (docs/events.md "Sequence"): a running relay starts its batches
 * RELAY_KEY_LAG keys below the highest it took, so an event recorded by a transaction that stays
 * open while more than that many later events are relayed is taken by the relay's periodic batch
 * from the start: late, never lost, numbered after the events relayed before it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import postgres from 'postgres'
import { appendEvents } from '../../db/queries/events'
import { RELAY_KEY_LAG, startWebhookRelay } from '../../shared/webhooks/relay'
import { relayAll } from '../helpers/relay'
import { createTestContext, eventually, seedBusiness, type TestContext } from '../helpers/context'

let ctx: TestContext
let other: postgres.Sql
beforeAll(async () => {
  ctx = await createTestContext()
  other = postgres(ctx.config.databaseUrl, { max: 1, onnotice: () => {} })
  await relayAll(ctx.deps)
})
afterAll(async () => {
  await other?.end({ timeout: 1 })
  await ctx?.close()
})

test('an event committed after more than RELAY_KEY_LAG later ones were relayed is relayed too, after them', async () => {
  const biz = await seedBusiness(ctx)
  // A transaction records its lead.created (taking an outbox key) and stays open.
  let commit!: () => void
  const committed = new Promise<void>((resolve) => (commit = resolve))
  let inserted!: () => void
  const recorded = new Promise<void>((resolve) => (inserted = resolve))
  const straggler = other.begin(async (tx) => {
    await tx`insert into contacts (business_id, name, phone) values (${biz.id}, 'Rezagada', '+34600777001')`
    inserted()
    await committed
  })
  await recorded
  // Later events, more than the lag, committed and relayed by a running relay.
  const later = RELAY_KEY_LAG + 500
  for (let i = 0; i < later; i += 2000) {
    const rows = Array.from({ length: Math.min(2000, later - i) }, (_, j) => ({ type: 'property.updated', data: { object: { id: i + j + 1 } } }))
    await ctx.deps.database.db.transaction((tx) => appendEvents(tx, biz.id, rows))
  }
  const relay = startWebhookRelay(ctx.deps)
  try {
    const count = async (type: string) =>
      Number(
        (await ctx.deps.database.db.execute<{ n: number }>(sql`select count(*)::int as n from events where business_id = ${biz.id} and type = ${type}`))[0].n,
      )
    await eventually(async () => (await count('property.updated')) === later, { what: 'the later events relayed', timeoutMs: 20_000 })
    commit()
    await straggler
    await eventually(async () => (await count('lead.created')) === 1, { what: 'the straggler relayed', timeoutMs: 10_000 })
  } finally {
    await relay.stop()
  }
  const [last] = await ctx.deps.database.db.execute<{ type: string; sequence: string }>(
    sql`select type, sequence from events where business_id = ${biz.id} order by sequence desc limit 1`,
  )
  expect(last).toEqual({ type: 'lead.created', sequence: String(later + 1) })
  expect(Number((await ctx.deps.database.db.execute<{ n: number }>(sql`select count(*)::int as n from event_outbox where business_id = ${biz.id}`))[0].n)).toBe(
    0,
  )
}, 60_000)
