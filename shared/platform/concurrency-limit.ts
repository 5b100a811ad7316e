/**
 * How many calls of one kind run at once in this process, the others waiting in arrival order.
 *
 * Used for the catalogue's list statements (CATALOGUE_CONCURRENCY, docs/operations.md
 * "Connections"): with as many statements in flight as clients, PostgreSQL's backends and the
 * API's one event loop share the cores in slices and the tail of every answer grows; a few in
 * flight keep the cores busy and the rest wait here, in order, without holding a connection.
 *
 * During an outage a bound would hold calls behind a few that each wait for a connection attempt
 * of the driver. So when a call fails as `liftOn` says (the database not reachable), the bound is
 * lifted for `liftForMs`: every waiting call goes at once, and the driver answers them as fast as
 * without a bound (a 503 each); the first success after that restores it.
 */
export interface ConcurrencyLimitOptions {
  /** A failure that lifts the bound (a connection-level one). */
  liftOn?: (error: unknown) => boolean
  liftForMs?: number
  now?: () => number
}

export class ConcurrencyLimit {
  readonly limit: number
  #active = 0
  readonly #waiting: (() => void)[] = []
  #liftedUntil = 0
  readonly #liftOn: (error: unknown) => boolean
  readonly #liftForMs: number
  readonly #now: () => number

  constructor(limit: number, options: ConcurrencyLimitOptions = {}) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a concurrency limit is an integer of at least 1, not ${limit}`)
    this.limit = limit
    this.#liftOn = options.liftOn ?? (() => false)
    this.#liftForMs = options.liftForMs ?? 1000
    this.#now = options.now ?? Date.now
  }

  /** Calls running now. */
  get active(): number {
    return this.#active
  }

  /** Calls waiting for their turn. */
  get waiting(): number {
    return this.#waiting.length
  }

  run<T>(call: () => Promise<T>): Promise<T> {
    if (this.#waiting.length === 0 && this.#admits()) {
      this.#active++
      return this.#call(call)
    }
    return new Promise<void>((resolve) => this.#waiting.push(resolve)).then(() => this.#call(call))
  }

  #admits(): boolean {
    return this.#active < this.limit || this.#now() < this.#liftedUntil
  }

  async #call<T>(call: () => Promise<T>): Promise<T> {
    try {
      const result = await call()
      this.#liftedUntil = 0
      return result
    } catch (error) {
      if (this.#liftOn(error)) this.#liftedUntil = this.#now() + this.#liftForMs
      throw error
    } finally {
      this.#active--
      this.#wake()
    }
  }

  /** Hands free turns to the waiting calls, oldest first (each counted as running before it resumes). */
  #wake(): void {
    while (this.#waiting.length > 0 && this.#admits()) {
      this.#active++
      this.#waiting.shift()?.()
    }
  }
}
