/**
 * A concurrent twin of an idempotent request waits for a
 * notification (PostgreSQL LISTEN/NOTIFY, sent in the transaction that stores the answer), not a
 * database poll every 25 ms; a bounded re-check (500 ms) covers a lost notification. The twin's
 * database reads are counted on the real connection (its `execute` calls), nothing is mocked.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { idempotent } from '../../shared/platform/idempotency'
import { createTestContext, eventually, seedBusiness, type TestContext } from '../helpers/context'

let ctx: TestContext
let apiKeyId: number
beforeAll(async () => {
  ctx = await createTestContext()
  const biz = await seedBusiness(ctx)
  const [row] = await ctx.deps.database.db.execute<{ id: number }>(sql`select id from api_keys where key_id = ${biz.keyId}`)
  apiKeyId = row.id
})
afterAll(async () => {
  // A failed test leaves its first request waiting: let it finish before the pool closes.
  for (const g of gates) g.open()
  await Bun.sleep(0)
  await ctx.close()
})

/** The real database handle, with the time of each statement it runs recorded. */
function counted(db: Db): { db: Db; reads: number[] } {
  const reads: number[] = []
  const proxy = new Proxy(db, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver)
      if (prop === 'execute') return (...args: unknown[]) => (reads.push(performance.now()), (value as (...a: unknown[]) => unknown).apply(receiver, args))
      return value
    },
  })
  return { db: proxy, reads }
}

/** Holds the first request inside its operation: `entered` once it runs, until `open()`. */
function gate(): { open: () => void; opened: Promise<void>; enter: () => void; entered: Promise<void> } {
  let open!: () => void
  let enter!: () => void
  const opened = new Promise<void>((r) => (open = r))
  const entered = new Promise<void>((r) => (enter = r))
  return { open, opened, enter, entered }
}
const gates: ReturnType<typeof gate>[] = []
// Woken by the notification, not by the next bounded re-check (500 ms after the last one): the
// bound sits well under the re-check and well over a notification's delay on a loaded machine.
const WOKEN_BY_NOTIFY_MS = 350

let n = 0
const scope = () => ({ apiKeyId, operation: 'createLead' as const, key: `notify-${Date.now()}-${n++}`, body: { n } })

describe('idempotent twins wait on a notification', () => {
  test('the twin does not poll while the first runs, and wakes as soon as the answer is stored', async () => {
    const s = scope()
    const g = gate()
    gates.push(g)
    const first = idempotent(ctx.deps.database.db, s, async () => {
      g.enter()
      await g.opened
      return { status: 201, body: { status: 'ok', id: 7 } }
    })
    await g.entered // the first holds the claim
    const twinDb = counted(ctx.deps.database.db)
    const twin = idempotent(twinDb.db, s, async () => {
      throw new Error('the twin must not run the operation')
    })
    // Let the twin wait through at least two bounded re-checks.
    await eventually(async () => twinDb.reads.length >= 5, { timeoutMs: 5000, intervalMs: 5, what: 'the twin to re-check twice' })
    const gaps = twinDb.reads.slice(1).map((t, i) => t - twinDb.reads[i])
    // Claim, read, read after subscribing, then one bounded re-check per 500 ms — not a read every 25 ms.
    expect(gaps.slice(-2).every((g) => g >= 400), `gaps between the twin's statements: ${gaps.map(Math.round).join(', ')} ms`).toBe(true)

    // Open the gate right after a re-check, so only the notification can wake the twin quickly.
    const before = twinDb.reads.length
    await eventually(async () => twinDb.reads.length > before, { timeoutMs: 2000, intervalMs: 2 })
    g.open()
    const stored = await first
    const storedAt = performance.now()
    const replay = await twin
    expect(performance.now() - storedAt).toBeLessThan(WOKEN_BY_NOTIFY_MS)
    expect(stored).toEqual({ status: 201, body: { status: 'ok', id: 7 }, replayed: false })
    expect(replay).toEqual({ status: 201, body: { status: 'ok', id: 7 }, replayed: true })
  })

  test('a twin waiting on a request that fails (5xx, key released) wakes at once and runs the operation itself', async () => {
    const s = scope()
    const g = gate()
    gates.push(g)
    const first = idempotent(ctx.deps.database.db, s, async () => {
      g.enter()
      await g.opened
      throw new Error('simulated 500')
    })
    await g.entered // the first holds the claim
    const twinDb = counted(ctx.deps.database.db)
    const twin = idempotent(twinDb.db, s, async () => ({ status: 201, body: { status: 'ok', id: 8 } }))
    await eventually(async () => twinDb.reads.length >= 3, { timeoutMs: 5000, intervalMs: 2 })
    const before = twinDb.reads.length
    await eventually(async () => twinDb.reads.length > before, { timeoutMs: 2000, intervalMs: 2 })
    g.open()
    await expect(first).rejects.toThrow('simulated 500')
    const releasedAt = performance.now()
    expect(await twin).toEqual({ status: 201, body: { status: 'ok', id: 8 }, replayed: false })
    expect(performance.now() - releasedAt).toBeLessThan(WOKEN_BY_NOTIFY_MS)
  })

  test('a lost notification delays the twin by one bounded re-check, never to the 10 s limit', async () => {
    const s = scope()
    const g = gate()
    gates.push(g)
    const first = idempotent(ctx.deps.database.db, s, async () => {
      g.enter()
      await g.opened
      throw new Error('gave up')
    }).catch(() => undefined)
    await g.entered // the first holds the claim
    const twinDb = counted(ctx.deps.database.db)
    const twin = idempotent(twinDb.db, s, async () => {
      throw new Error('the twin must not run the operation')
    })
    await eventually(async () => twinDb.reads.length >= 3, { timeoutMs: 5000, intervalMs: 2 })
    // The answer appears without any NOTIFY (as if the notification were lost).
    await ctx.deps.database.db.execute(sql`update idempotency_keys set state = 'done', response_status = 201, response_body = '{"status":"ok","id":9}'
      where api_key_id = ${s.apiKeyId} and operation = ${s.operation} and key = ${s.key}`)
    const storedAt = performance.now()
    expect(await twin).toEqual({ status: 201, body: { status: 'ok', id: 9 }, replayed: true })
    expect(performance.now() - storedAt).toBeLessThan(1500)
    g.open()
    await first
  })
})
