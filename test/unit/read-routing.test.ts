/** Where a catalogue or list read goes (shared/platform/read-routing.ts, docs/operations.md "Read replica"). */
import { describe, expect, test } from 'bun:test'
import { chooseRead, lsnToNumber, type ReplicaView } from '../../shared/platform/read-routing'

const bounds = { maxLagMs: 5000, staleAfterMs: 2000 }
const now = 100_000
const healthy: ReplicaView = { checkedAt: now - 100, down: false, inRecovery: true, streaming: true, replayLsn: lsnToNumber('0/3000000'), lagMs: 40 }

describe('lsnToNumber', () => {
  test('X/Y hexadecimal halves, ordered as PostgreSQL orders them', () => {
    expect(lsnToNumber('0/0')).toBe(0)
    expect(lsnToNumber('0/16B3748')).toBe(0x16b3748)
    expect(lsnToNumber('1/0')).toBe(2 ** 32)
    expect(lsnToNumber('1/0')).toBeGreaterThan(lsnToNumber('0/FFFFFFFF'))
  })

  test('anything else is refused', () => {
    for (const bad of ['', '0', '0/', 'x/1', '1/2/3', '123456789/0']) expect(() => lsnToNumber(bad)).toThrow('not an LSN')
  })
})

describe('chooseRead', () => {
  test('no recent write of the business, replica close behind: the replica', () => {
    expect(chooseRead(healthy, null, now, bounds)).toEqual({ target: 'replica', reason: 'replica' })
  })

  test('the business wrote past what the replica replayed: the primary', () => {
    expect(chooseRead(healthy, healthy.replayLsn + 1, now, bounds)).toEqual({ target: 'primary', reason: 'own-write' })
  })

  test('the replica replayed the write: the replica again', () => {
    expect(chooseRead(healthy, healthy.replayLsn, now, bounds).target).toBe('replica')
    expect(chooseRead(healthy, healthy.replayLsn - 100, now, bounds).target).toBe('replica')
  })

  test('the marker could not be read (Redis down): the primary', () => {
    expect(chooseRead(healthy, undefined, now, bounds)).toEqual({ target: 'primary', reason: 'marker-unknown' })
  })

  test('lagging past the bound, down, never checked, check too old: bypassed, whatever the marker', () => {
    expect(chooseRead({ ...healthy, lagMs: 5001 }, null, now, bounds).reason).toBe('lagging')
    expect(chooseRead({ ...healthy, lagMs: 5000 }, null, now, bounds).target).toBe('replica')
    expect(chooseRead({ ...healthy, down: true }, null, now, bounds).reason).toBe('down')
    expect(chooseRead({ ...healthy, checkedAt: undefined }, null, now, bounds).reason).toBe('unchecked')
    expect(chooseRead({ ...healthy, checkedAt: now - 2001 }, null, now, bounds).reason).toBe('unchecked')
  })

  test('promoted, or cut off from its primary: no longer a replica of it', () => {
    expect(chooseRead({ ...healthy, inRecovery: false }, null, now, bounds).reason).toBe('not-following')
    expect(chooseRead({ ...healthy, streaming: false }, null, now, bounds).reason).toBe('not-following')
  })
})
