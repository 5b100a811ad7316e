import { describe, expect, test } from 'bun:test'
import { ConcurrencyLimit } from '../../shared/platform/concurrency-limit'

/** A call that runs until `finish` is called, recording its start. */
function gate(started: number[], id: number) {
  let finish: (value?: unknown) => void = () => {}
  let fail: (error: unknown) => void = () => {}
  const done = new Promise((resolve, reject) => {
    finish = resolve
    fail = reject
  })
  return {
    call: () => {
      started.push(id)
      return done
    },
    finish: () => finish(id),
    fail: (error: unknown) => fail(error),
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

/** Two calls on a limit of 1: only the first starts until it finishes. */
async function expectBounded(limit: ConcurrencyLimit): Promise<void> {
  const started: number[] = []
  const [a, b] = [gate(started, 0), gate(started, 1)]
  const runs = [limit.run(a.call), limit.run(b.call)]
  await tick()
  expect(started).toEqual([0])
  a.finish()
  b.finish()
  await Promise.all(runs)
}

describe('ConcurrencyLimit', () => {
  test('runs at most `limit` calls at once; the others start in arrival order as turns free up', async () => {
    const limit = new ConcurrencyLimit(2)
    const started: number[] = []
    const gates = [0, 1, 2, 3].map((id) => gate(started, id))
    const results = gates.map((g) => limit.run(g.call))
    await tick()
    expect(started).toEqual([0, 1])
    expect([limit.active, limit.waiting]).toEqual([2, 2])
    gates[1].finish()
    await tick()
    expect(started).toEqual([0, 1, 2])
    gates[0].finish()
    await tick()
    expect(started).toEqual([0, 1, 2, 3])
    gates[2].finish()
    gates[3].finish()
    expect(await Promise.all(results)).toEqual([0, 1, 2, 3])
    expect([limit.active, limit.waiting]).toEqual([0, 0])
  })

  test('a failing call frees its turn and its error reaches its caller alone', async () => {
    const limit = new ConcurrencyLimit(1)
    const started: number[] = []
    const [a, b] = [gate(started, 0), gate(started, 1)]
    const first = limit.run(a.call)
    const second = limit.run(b.call)
    a.fail(new Error('a statement error'))
    await expect(first).rejects.toThrow('a statement error')
    await tick()
    expect(started).toEqual([0, 1])
    b.finish()
    expect(await second).toBe(1)
    expect(limit.active).toBe(0)
  })

  test('a call that throws before returning a promise frees its turn too', async () => {
    const limit = new ConcurrencyLimit(1)
    await expect(
      limit.run(() => {
        throw new Error('thrown at once')
      }),
    ).rejects.toThrow('thrown at once')
    expect(await limit.run(async () => 'next')).toBe('next')
  })

  test('an unavailable failure lifts the bound for liftForMs: every waiting call goes at once; a success restores it', async () => {
    const now = 1_000
    const limit = new ConcurrencyLimit(1, { liftOn: (e) => (e as { code?: string }).code === 'ECONNREFUSED', liftForMs: 500, now: () => now })
    const started: number[] = []
    const gates = [0, 1, 2, 3].map((id) => gate(started, id))
    const results = gates.map((g) => limit.run(g.call).catch((e: Error) => e.message))
    await tick()
    expect(started).toEqual([0])
    gates[0].fail(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))
    await tick()
    expect(started).toEqual([0, 1, 2, 3])
    expect(limit.active).toBe(3)
    // While lifted, a new call does not wait either.
    const extra = gate(started, 4)
    const extraResult = limit.run(extra.call)
    await tick()
    expect(started).toEqual([0, 1, 2, 3, 4])
    for (const g of [...gates.slice(1), extra]) g.finish()
    expect(await Promise.all([...results, extraResult])).toEqual(['refused', 1, 2, 3, 4])
    // The successes restored the bound.
    const [c, d] = [gate(started, 5), gate(started, 6)]
    const more = [limit.run(c.call), limit.run(d.call)]
    await tick()
    expect(started.slice(5)).toEqual([5])
    c.finish()
    d.finish()
    await Promise.all(more)
  })

  test('the lift ends after liftForMs without a success', async () => {
    let now = 0
    const limit = new ConcurrencyLimit(1, { liftOn: () => true, liftForMs: 500, now: () => now })
    await limit.run(() => Promise.reject(new Error('down'))).catch(() => {})
    now = 500
    await expectBounded(limit)
  })

  test('a failure the predicate does not name keeps the bound', async () => {
    const limit = new ConcurrencyLimit(1, { liftOn: () => false })
    await limit.run(() => Promise.reject(new Error('syntax'))).catch(() => {})
    await expectBounded(limit)
  })

  test('the limit is an integer of at least 1', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new ConcurrencyLimit(bad)).toThrow(RangeError)
  })
})
