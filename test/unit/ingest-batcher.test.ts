/**
 * The micro-batcher's own logic, with plain functions standing in for the two sinks (the real
 * Redis/PostgreSQL paths are in test/worker/lead-ingest*.test.ts).
 */
import { describe, expect, test } from 'bun:test'
import { IngestBatcher } from '../../api/ingest-batcher'
import { buildIngestLead, type IngestLead } from '../../shared/leads/ingest'
import { createLogger } from '../../shared/platform/logger'

const lead = (n: number) =>
  buildIngestLead(1, { source: 's', sourcePage: 'p', contact: { name: `n${n}`, phone: `+3460011${String(n).padStart(4, '0')}` }, search: {} })

function batcher(overrides: Partial<ConstructorParameters<typeof IngestBatcher>[0]> = {}) {
  const enqueued: IngestLead[][] = []
  const stored: IngestLead[][] = []
  const b = new IngestBatcher({
    enqueue: async (leads) => void enqueued.push(leads),
    store: async (leads) => void stored.push(leads),
    logger: createLogger('silent'),
    maxItems: 5,
    maxWaitMs: 5,
    enqueueTimeoutMs: 100,
    ...overrides,
  })
  return { b, enqueued, stored }
}

describe('IngestBatcher', () => {
  test('gathers concurrent leads into one batch and answers each once it is queued', async () => {
    const { b, enqueued } = batcher()
    const outcomes = await Promise.all([1, 2, 3].map((n) => b.submit(lead(n))))
    expect(outcomes).toEqual(['queued', 'queued', 'queued'])
    expect(enqueued.map((x) => x.length)).toEqual([3])
  })

  test('group commit: a lone lead waits no timer; leads arriving while a batch is on its way leave when it is acknowledged', async () => {
    let open!: () => void
    const gate = new Promise<void>((r) => (open = r))
    const sent: number[] = []
    const { b } = batcher({
      maxWaitMs: 60_000,
      enqueue: async (leads) => {
        sent.push(leads.length)
        if (sent.length === 1) await gate
      },
    })
    const first = b.submit(lead(1))
    // Sent at the end of this event-loop turn, not after maxWaitMs.
    await new Promise((r) => setImmediate(r))
    expect(sent).toEqual([1])
    const later = [2, 3, 4].map((n) => b.submit(lead(n)))
    await new Promise((r) => setImmediate(r))
    // The first batch is still on its way: the next three gather behind it.
    expect(sent).toEqual([1])
    open()
    expect(await first).toBe('queued')
    expect(await Promise.all(later)).toEqual(['queued', 'queued', 'queued'])
    expect(sent).toEqual([1, 3])
  })

  test('behind a batch that Redis does not acknowledge, gathered leads leave after maxWaitMs', async () => {
    let open!: () => void
    const gate = new Promise<void>((r) => (open = r))
    const sent: number[] = []
    const { b } = batcher({
      maxWaitMs: 5,
      enqueueTimeoutMs: 60_000,
      enqueue: async (leads) => {
        sent.push(leads.length)
        if (sent.length === 1) await gate
      },
    })
    const first = b.submit(lead(1))
    await new Promise((r) => setImmediate(r))
    const second = b.submit(lead(2))
    // The first batch is never acknowledged until the gate opens: only the timer can send the second.
    expect(await second).toBe('queued')
    expect(sent).toEqual([1, 1])
    open()
    expect(await first).toBe('queued')
  })

  test('a full batch is sent at once, without waiting for the timer', async () => {
    const { b, enqueued } = batcher({ maxWaitMs: 60_000 })
    const all = Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => b.submit(lead(n))))
    expect(enqueued.map((x) => x.length)).toEqual([5])
    await b.close()
    await all
    expect(enqueued.map((x) => x.length)).toEqual([5, 2])
  })

  test('an enqueue failure stores the same batch directly', async () => {
    const { b, stored, enqueued } = batcher({
      enqueue: async () => {
        throw new Error('Connection is closed.')
      },
    })
    expect(await Promise.all([b.submit(lead(1)), b.submit(lead(2))])).toEqual(['stored', 'stored'])
    expect(enqueued).toEqual([])
    expect(stored.map((x) => x.map((l) => l.name))).toEqual([['n1', 'n2']])
    expect(b.stats).toMatchObject({ batches: 1, leads: 2, fallbacks: 1, fallbackLeads: 2 })
  })

  test('an enqueue that does not answer in time is stored directly', async () => {
    const logs: string[] = []
    const { b, stored } = batcher({ enqueue: () => new Promise(() => {}), enqueueTimeoutMs: 50, logger: createLogger('warn', {}, (line) => logs.push(line)) })
    const outcome = b.submit(lead(1))
    await new Promise((r) => setImmediate(r))
    // The batch is on its way and Redis has not answered: nothing is stored before the timeout.
    expect(stored).toEqual([])
    expect(await outcome).toBe('stored')
    expect(stored).toHaveLength(1)
    expect(logs.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ msg: 'lead-ingest queue unavailable; storing the batch directly', error: 'Redis did not acknowledge within 50 ms' }),
    ])
  })

  test('when both sinks fail every waiting request fails (nothing was accepted)', async () => {
    const { b } = batcher({
      enqueue: async () => {
        throw new Error('redis down')
      },
      store: async () => {
        throw new Error('pg down')
      },
    })
    const results = await Promise.allSettled([b.submit(lead(1)), b.submit(lead(2))])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
  })

  test('close() flushes what is gathering and waits for batches in flight', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const { b, enqueued } = batcher({
      maxWaitMs: 60_000,
      enqueue: async (leads) => {
        await gate
        enqueued.push(leads)
      },
    })
    const pending = b.submit(lead(1))
    let closed = false
    const closing = b.close().then(() => (closed = true))
    await new Promise((r) => setImmediate(r))
    // The batch is in flight (held by the gate): close() has not returned.
    expect(closed).toBe(false)
    release()
    await closing
    expect(await pending).toBe('queued')
    expect(enqueued).toHaveLength(1)
  })
})
