/**
 * Group acknowledgement by Redis replicas (WAIT). WAIT counts the writes of the connection it
 * runs on and blocks that connection meanwhile, so one WAIT per write would put every write
 * behind the previous one's round trip to the replicas. Instead one WAIT at a time is in flight
 * and covers every write the connection had answered when it was sent; callers arriving while it
 * runs share the next one (at most two rounds for any caller, however many callers).
 */
import type IORedis from 'ioredis'
import { ServiceUnavailableError } from './errors'
import { asRedisFailure } from './unavailable'

export class ReplicaAck {
  private inFlight: Promise<number> | undefined
  private next: Promise<number> | undefined
  /**
   * Counts the connection's closes. A WAIT on a new connection (after a reconnect, perhaps to
   * another master) counts none of the old connection's writes and would answer at once, so a
   * caller is acknowledged only by a WAIT sent on the connection its write was answered on.
   */
  private generation = 0

  constructor(
    private readonly connection: IORedis,
    private readonly replicas: number,
    private readonly timeoutMs: number,
  ) {
    connection.on('close', () => this.generation++)
  }

  /**
   * Resolves once `replicas` replicas hold every write this connection had been answered for
   * when this was called; rejects with ServiceUnavailableError when fewer acknowledge in time.
   */
  async acknowledged(): Promise<void> {
    const generation = this.generation
    // The WAIT in flight may have been sent before the caller's write was answered: wait for the next.
    const round = this.inFlight ? this.after(this.inFlight) : this.begin()
    if ((await round) !== generation) throw new ServiceUnavailableError('Redis', new Error('the connection to Redis changed before the replicas acknowledged'))
  }

  /** The WAIT that follows the one in flight, one for every caller that arrives meanwhile. */
  private after(inFlight: Promise<number>): Promise<number> {
    this.next ??= inFlight.then(
      () => this.begin(),
      () => this.begin(),
    )
    return this.next
  }

  /** One WAIT; resolves to the connection generation it was sent on. */
  private begin(): Promise<number> {
    this.next = undefined
    const generation = this.generation
    const round: Promise<number> = this.waitOnce()
      .then(() => generation)
      .finally(() => {
        if (this.inFlight === round) this.inFlight = undefined
      })
    this.inFlight = round
    return round
  }

  private async waitOnce(): Promise<void> {
    let acknowledged: number
    try {
      acknowledged = await this.connection.wait(this.replicas, this.timeoutMs)
    } catch (error) {
      throw asRedisFailure(error)
    }
    if (acknowledged < this.replicas)
      throw new ServiceUnavailableError('Redis', new Error(`${acknowledged} of ${this.replicas} replicas acknowledged within ${this.timeoutMs} ms`))
  }
}
