/**
 * ReplicaAck against a private master and replica: one WAIT serves many callers, and a caller is
 * never acknowledged by a WAIT sent on a later connection than the one its write was answered on.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import IORedis from 'ioredis'
import { ServiceUnavailableError } from '../../shared/platform/errors'
import { ReplicaAck } from '../../shared/platform/replica-ack'
import { SentinelTopology } from '../helpers/redis-sentinel'

const dir = mkdtempSync(join(tmpdir(), 'plm-replica-ack-'))
let topology: SentinelTopology
let master: IORedis

beforeAll(async () => {
  topology = await SentinelTopology.start(dir)
  master = new IORedis(topology.master.port, '127.0.0.1')
}, 30_000)
afterAll(async () => {
  master?.disconnect()
  await topology?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('ReplicaAck', () => {
  test('acknowledges a write the replica holds', async () => {
    await master.set('ack:one', '1')
    await new ReplicaAck(master, 1, 1000).acknowledged()
    const replica = new IORedis(topology.replicas[0].port, '127.0.0.1')
    try {
      expect(await replica.get('ack:one')).toBe('1')
    } finally {
      replica.disconnect()
    }
  })

  test('more replicas than exist: refused as Redis unavailable once the timeout passes', async () => {
    await master.set('ack:two', '2')
    expect(
      await new ReplicaAck(master, 2, 50).acknowledged().then(
        () => null,
        (e) => e,
      ),
    ).toBeInstanceOf(ServiceUnavailableError)
  })

  test('a caller whose WAIT would be sent after the connection closed is refused, not acknowledged', async () => {
    const ack = new ReplicaAck(master, 1, 1000)
    await master.set('ack:three', '3')
    const first = ack.acknowledged()
    const second = ack.acknowledged()
    // What ioredis emits when the socket closes; the next WAIT would run on a new connection.
    master.emit('close')
    await first
    expect(
      await second.then(
        () => null,
        (e) => e,
      ),
    ).toBeInstanceOf(ServiceUnavailableError)
  })
})
