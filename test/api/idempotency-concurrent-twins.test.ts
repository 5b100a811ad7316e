/**
 * A concurrent twin of an idempotent request waits for a
 * notification (PostgreSQL LISTEN/NOTIFY, sent in the transaction that stores the answer), not a
 * database poll every 25 ms; a bounded re-check (a 500 ms timer) covers a lost notification. The
 * test holds that timer (test/helpers/held-timers.ts), so what wakes the twin is known by whether
 * the re-check was let run, not by how long the wake took. The twin's database reads are counted
 * on the real connection (its `execute` calls), nothing is mocked.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { idempotent } from '../../shared/platform/idempotency'
import { createTestContext, eventually, seedBusiness, type TestContext } from '../helpers/context'
import { holdTimers, type HeldTimers } from '../helpers/held-timers'

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
  await Promise.allSettled(firsts)
  await ctx.close()
})

/** The real database handle, counting the statements it runs. */
function counted(db: Db): { db: Db; readonly reads: number } {
  let reads = 0
  const proxy = new Proxy(db, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver)
      if (prop === 'execute') {
        return (...args: unknown[]) => {
          reads++
          return (value as (...a: unknown[]) => unknown).apply(receiver, args)
        }
      }
      return value
    },
  })
  return {
    db: proxy,
    get reads() {
      return reads
    },
  }
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
const firsts: Promise<unknown>[] = []
/** The twin's bounded re-check (RECHECK_MS in shared/platform/idempotency.ts). */
const RECHECK_MS = 500

let n = 0
const scope = () => ({ apiKeyId, operation: 'createLead' as const, key: `notify-${crypto.randomUUID()}`, body: { n: n++ } })

/** A twin that has claimed nothing and now waits: its reads so far, and its re-check timer held. */
async function waitingTwin<T>(recheck: HeldTimers, run: (db: Db) => Promise<T>) {
  const twinDb = counted(ctx.deps.database.db)
  let settled = false
  const twin = run(twinDb.db).finally(() => (settled = true))
  twin.catch(() => {})
  // Claim (refused), read, read again once subscribed; then one re-check timer, and nothing else.
  await eventually(async () => twinDb.reads === 3 && recheck.pending === 1, {
    what: 'the twin to wait on its re-check',
    get detail() {
      return `${twinDb.reads} reads, ${recheck.pending} re-checks pending`
    },
  })
  return { twin, twinDb, settled: () => settled }
}

describe('idempotent twins wait on a notification', () => {
  test('the twin does not poll while the first runs: one read per re-check; the stored answer wakes it with no re-check', async () => {
    const s = scope()
    const g = gate()
    gates.push(g)
    const first = idempotent(ctx.deps.database.db, s, async () => {
      g.enter()
      await g.opened
      return { status: 201, body: { status: 'ok', id: 7 } }
    })
    firsts.push(first)
    await g.entered // the first holds the claim
    const recheck = holdTimers(RECHECK_MS)
    try {
      const { twin, twinDb, settled } = await waitingTwin(recheck, (db) =>
        idempotent(db, s, async () => {
          throw new Error('the twin must not run the operation')
        }),
      )
      // Each re-check is one read, and the twin waits again.
      recheck.fire()
      await eventually(async () => twinDb.reads === 4 && recheck.pending === 1, { what: 'one re-check, then waiting again' })
      // The re-check is held from here on: only the notification can wake the twin.
      g.open()
      const stored = await first
      await eventually(async () => settled(), { what: 'the notification to wake the twin' })
      const replay = await twin
      expect(stored).toEqual({ status: 201, body: { status: 'ok', id: 7 }, replayed: false })
      expect(replay).toEqual({ status: 201, body: { status: 'ok', id: 7 }, replayed: true })
      expect(twinDb.reads).toBe(5)
    } finally {
      recheck.release()
    }
  })

  test('a twin waiting on a request that fails (5xx, key released) is woken by the release and runs the operation itself', async () => {
    const s = scope()
    const g = gate()
    gates.push(g)
    const first = idempotent(ctx.deps.database.db, s, async () => {
      g.enter()
      await g.opened
      throw new Error('simulated 500')
    })
    firsts.push(first)
    await g.entered // the first holds the claim
    const recheck = holdTimers(RECHECK_MS)
    try {
      const { twin, settled } = await waitingTwin(recheck, (db) => idempotent(db, s, async () => ({ status: 201, body: { status: 'ok', id: 8 } })))
      g.open()
      await expect(first).rejects.toThrow('simulated 500')
      await eventually(async () => settled(), { what: 'the release to wake the twin' })
      expect(await twin).toEqual({ status: 201, body: { status: 'ok', id: 8 }, replayed: false })
    } finally {
      recheck.release()
    }
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
    firsts.push(first)
    await g.entered // the first holds the claim
    const recheck = holdTimers(RECHECK_MS)
    try {
      const { twin, twinDb, settled } = await waitingTwin(recheck, (db) =>
        idempotent(db, s, async () => {
          throw new Error('the twin must not run the operation')
        }),
      )
      // The answer appears without any NOTIFY (as if the notification were lost): the twin still waits.
      await ctx.deps.database.db.execute(sql`update idempotency_keys set state = 'done', response_status = 201, response_body = '{"status":"ok","id":9}'
        where api_key_id = ${s.apiKeyId} and operation = ${s.operation} and key = ${s.key}`)
      expect([settled(), twinDb.reads]).toEqual([false, 3])
      // Its one re-check finds the answer.
      recheck.fire()
      expect(await twin).toEqual({ status: 201, body: { status: 'ok', id: 9 }, replayed: true })
      expect(twinDb.reads).toBe(4)
    } finally {
      recheck.release()
    }
    g.open()
    await first
  })
})
