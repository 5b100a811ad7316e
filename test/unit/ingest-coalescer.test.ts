/** The worker's group commit (worker/ingest-coalescer.ts) with a plain function as the store; the real store is in test/worker/lead-ingest.test.ts. */
import { describe, expect, test } from 'bun:test'
import { IngestCoalescer, type IngestCoalescerOptions } from '../../worker/ingest-coalescer'
import { buildIngestLead, type IngestLead } from '../../shared/leads/ingest'

const lead = (n: number) =>
  buildIngestLead(1, { source: 's', sourcePage: 'p', contact: { name: `n${n}`, phone: `+3460022${String(n).padStart(4, '0')}` }, search: {} })

function coalescer(store: (leads: IngestLead[]) => Promise<void> = async () => {}, options: IngestCoalescerOptions = { parallel: 1, maxLeads: 1000 }) {
  const calls: string[][] = []
  const c = new IngestCoalescer(async (leads) => {
    calls.push(leads.map((l) => l.name))
    await store(leads)
    return leads.map((l) => ({ businessId: l.businessId, phone: l.phone }))
  }, options)
  return { c, calls }
}

/** A store whose first call waits until `open()`: the jobs submitted meanwhile gather behind it. */
function firstStoreHeld(then: (leads: IngestLead[]) => void = () => {}) {
  let open!: () => void
  const gate = new Promise<void>((r) => (open = r))
  let first = true
  const store = async (leads: IngestLead[]) => {
    if (first) {
      first = false
      await gate
    }
    then(leads)
  }
  return { store, open }
}

describe('IngestCoalescer', () => {
  test('jobs arriving while a store runs go together in the next one', async () => {
    const held = firstStoreHeld()
    const { c, calls } = coalescer(held.store)
    const open = held.open
    const a = c.store([lead(1)])
    const rest = [c.store([lead(2), lead(3)]), c.store([lead(4)])]
    open()
    expect(await a).toBe(1)
    expect(await Promise.all(rest)).toEqual([2, 1])
    expect(calls).toEqual([['n1'], ['n2', 'n3', 'n4']])
  })

  test('a merged store stays within maxLeads (a larger job still goes, alone)', async () => {
    const held = firstStoreHeld()
    const { c, calls } = coalescer(held.store, { parallel: 1, maxLeads: 3 })
    const open = held.open
    const jobs = [c.store([lead(1)]), c.store([lead(2), lead(3)]), c.store([lead(4), lead(5)]), c.store([lead(6), lead(7), lead(8), lead(9)])]
    open()
    await Promise.all(jobs)
    expect(calls).toEqual([['n1'], ['n2', 'n3'], ['n4', 'n5'], ['n6', 'n7', 'n8', 'n9']])
  })

  test('a failing merged store is retried job by job: only the bad job fails', async () => {
    const held = firstStoreHeld((leads) => {
      if (leads.some((l) => l.name === 'n3')) throw new Error('bad lead')
    })
    const { c, calls } = coalescer(held.store)
    const open = held.open
    const a = c.store([lead(1)])
    const good = c.store([lead(2)])
    const bad = c.store([lead(3)])
    const alsoGood = c.store([lead(4)])
    open()
    expect(await a).toBe(1)
    expect(await good).toBe(1)
    await expect(bad).rejects.toThrow('bad lead')
    expect(await alsoGood).toBe(1)
    expect(calls).toEqual([['n1'], ['n2', 'n3', 'n4'], ['n2'], ['n3'], ['n4']])
  })

  test('PostgreSQL unreachable fails every merged job at once, without a try each', async () => {
    const held = firstStoreHeld((leads) => {
      if (leads.length > 1) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
    })
    const { c, calls } = coalescer(held.store)
    const first = c.store([lead(1)])
    const merged = [c.store([lead(2)]), c.store([lead(3)])]
    held.open()
    expect(await first).toBe(1)
    const outcomes = await Promise.allSettled(merged)
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : o.status))).toEqual(['connect ECONNREFUSED', 'connect ECONNREFUSED'])
    expect(calls).toEqual([['n1'], ['n2', 'n3']])
  })

  test('up to `parallel` stores run at once', async () => {
    let open!: () => void
    const gate = new Promise<void>((r) => (open = r))
    let running = 0
    let most = 0
    const { c } = coalescer(
      async () => {
        most = Math.max(most, ++running)
        await gate
        running--
      },
      { parallel: 2, maxLeads: 1 },
    )
    const all = Promise.all(Array.from({ length: 6 }, (_, i) => c.store([lead(i)])))
    // Every store is held: as many run as may, and the other jobs wait.
    expect(running).toBe(2)
    open()
    await all
    expect(most).toBe(2)
  })

  test('with gatherMs, a store that would start small waits, and jobs arriving meanwhile go in it', async () => {
    const { c, calls } = coalescer(async () => {}, { parallel: 1, maxLeads: 1000, gatherMs: 50 })
    const first = c.store([lead(1)])
    // Without gatherMs the first store would have started already, with n1 alone.
    expect(calls).toEqual([])
    const second = c.store([lead(2), lead(3)])
    expect(await Promise.all([first, second])).toEqual([1, 2])
    expect(calls).toEqual([['n1', 'n2', 'n3']])
  })

  test('with gatherMs, a store already holding a quarter of maxLeads starts at once', async () => {
    // A wait of a minute would outlast the test's timeout.
    const { c, calls } = coalescer(async () => {}, { parallel: 1, maxLeads: 4, gatherMs: 60_000 })
    expect(await c.store([lead(1)])).toBe(1)
    expect(calls).toEqual([['n1']])
  })
})
