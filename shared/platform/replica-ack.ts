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
  private inFlight: Promise<void> | undefined
  private next: Promise<void> | undefined

  constructor(private readonly connection: IORedis, private readonly replicas: number, private readonly timeoutMs: number) {}

  /**
   * Resolves once `replicas` replicas hold every write this connection had been answered for
   * when this was called; rejects with ServiceUnavailableError when fewer acknowledge in time.
   */
  acknowledged(): Promise<void> {
    // The WAIT in flight may have been sent before the caller's write was answered: wait for the next.
    if (this.inFlight) return (this.next ??= this.inFlight.then(() => this.begin(), () => this.begin()))
    return this.begin()
  }

  private begin(): Promise<void> {
    this.next = undefined
    const round: Promise<void> = this.waitOnce().finally(() => {
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
    if (acknowledged < this.replicas) throw new ServiceUnavailableError('Redis', new Error(`${acknowledged} of ${this.replicas} replicas acknowledged within ${this.timeoutMs} ms`))
  }
}
