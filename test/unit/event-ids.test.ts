/** Event ids (contract §10.1): opaque, unguessable, one shape; minted many at a time for a batch. */
import { describe, expect, test } from 'bun:test'
import { EVENT_ID_RE } from '../../shared/events/schemas'
import { eventRows, newEventId, newEventIds } from '../../shared/events/record'

describe('event ids', () => {
  test('a batch of ids: each `evt_` and 24 base62 characters, all different', () => {
    const ids = newEventIds(2000)
    expect(ids).toHaveLength(2000)
    for (const id of ids) expect(id).toMatch(/^evt_[A-Za-z0-9]{24}$/)
    // Every id minted is one the routes accept as an event id.
    expect(ids.every((id) => EVENT_ID_RE.test(id))).toBe(true)
    expect(new Set(ids).size).toBe(2000)
  })

  test('one id, and the rows of a batch of events, have the same shape', () => {
    expect(newEventId()).toMatch(/^evt_[A-Za-z0-9]{24}$/)
    const rows = eventRows([{ type: 'lead.created', object: { id: 1 } }, { type: 'lead.created', object: { id: 2 } }])
    expect(rows.map((r) => r.id.length)).toEqual([28, 28])
    expect(rows[0].id).not.toBe(rows[1].id)
    expect(newEventIds(0)).toEqual([])
  })
})
