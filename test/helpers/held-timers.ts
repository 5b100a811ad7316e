/**
 * A clock the test moves, for code that waits on a timer of one known duration (a bounded
 * re-check): while held, every `setTimeout` of exactly `ms` waits until `fire()`, and every other
 * timer runs as usual. The test then tells what woke the code by whether it fired the timer,
 * never by how long anything took.
 */
export interface HeldTimers {
  /** Timers of the held duration set and neither fired nor cleared. */
  readonly pending: number
  /** Runs every pending timer now. */
  fire(): void
  /** Puts the real timers back (pending ones are dropped). */
  release(): void
}

export function holdTimers(ms: number): HeldTimers {
  const realSet = globalThis.setTimeout
  const realClear = globalThis.clearTimeout
  const held = new Map<object, () => void>()
  globalThis.setTimeout = ((callback: (...args: unknown[]) => void, delay?: number, ...args: unknown[]) => {
    if (delay !== ms) return realSet(callback, delay, ...args)
    const handle = { ref: () => handle, unref: () => handle, hasRef: () => false, refresh: () => handle, [Symbol.toPrimitive]: () => -1 }
    held.set(handle, () => callback(...args))
    return handle
  }) as unknown as typeof setTimeout
  globalThis.clearTimeout = ((handle: unknown) => {
    if (!held.delete(handle as object)) realClear(handle as Parameters<typeof clearTimeout>[0])
  }) as typeof clearTimeout
  return {
    get pending() {
      return held.size
    },
    fire() {
      const due = [...held.values()]
      held.clear()
      for (const run of due) run()
    },
    release() {
      held.clear()
      globalThis.setTimeout = realSet
      globalThis.clearTimeout = realClear
    },
  }
}
