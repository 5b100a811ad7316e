/** Event ids (contract §10.1): opaque, unguessable, one shape; minted many at a time for a batch; new ones index at the right edge. */
import { describe, expect, test } from 'bun:test'
import { EVENT_ID_RE } from '../../shared/events/schemas'
import { eventRows, newEventId, newEventIds } from '../../shared/events/record'

describe('event ids', () => {
  test('a batch of ids: each `evt_` and 26 characters: 11 hex, 15 base62, all different', () => {
    const ids = newEventIds(2000)
    expect(ids).toHaveLength(2000)
    for (const id of ids) expect(id).toMatch(/^evt_[0-9a-f]{11}[A-Za-z0-9]{15}$/)
    // Every id minted is one the routes accept as an event id.
    expect(ids.every((id) => EVENT_ID_RE.test(id))).toBe(true)
    expect(new Set(ids).size).toBe(2000)
  })

  test('one id, and the rows of a batch of events, have the same shape', () => {
    expect(newEventId()).toMatch(/^evt_[0-9a-f]{11}[A-Za-z0-9]{15}$/)
    const rows = eventRows([{ type: 'lead.created', object: { id: 1 } }, { type: 'lead.created', object: { id: 2 } }])
    expect(rows.map((r) => r.id.length)).toEqual([30, 30])
    expect(rows[0].id).not.toBe(rows[1].id)
    expect(newEventIds(0)).toEqual([])
  })

  test('ids minted later sort after earlier ones, in byte order and in a locale collation alike', async () => {
    const first = newEventIds(50)
    await Bun.sleep(3)
    const later = newEventIds(50)
    const collator = new Intl.Collator('en-US')
    for (const a of first) {
      for (const b of later) {
        expect(a < b).toBe(true)
        expect(collator.compare(a, b)).toBeLessThan(0)
      }
    }
    // The time prefix is the minting millisecond in hex.
    const ms = parseInt(later[0].slice(4, 15), 16)
    expect(Math.abs(ms - Date.now())).toBeLessThan(5000)
  })

  test('the random part differs between ids of the same millisecond', () => {
    const ids = newEventIds(1000)
    expect(new Set(ids.map((id) => id.slice(15))).size).toBe(1000)
  })
})
