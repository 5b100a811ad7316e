import { describe, expect, test } from 'bun:test'
import { inlineValues, sqlLiteral } from '../../db/inline-values'

describe('sqlLiteral', () => {
  test('null, booleans and finite numbers', () => {
    expect(sqlLiteral(null)).toBe('NULL')
    expect(sqlLiteral(true)).toBe('true')
    expect(sqlLiteral(false)).toBe('false')
    expect(sqlLiteral(42)).toBe('(42)')
    expect(sqlLiteral(-3.7038)).toBe('(-3.7038)')
    expect(sqlLiteral(1e21)).toBe('(1e+21)')
  })

  test('strings as escape strings, quotes and backslashes doubled', () => {
    expect(sqlLiteral('valencia')).toBe("E'valencia'")
    expect(sqlLiteral("o'brien")).toBe("E'o''brien'")
    expect(sqlLiteral("\\' or 1=1 --")).toBe("E'\\\\'' or 1=1 --'")
    expect(sqlLiteral('')).toBe("E''")
  })

  test('no literal for what it cannot write exactly', () => {
    expect(sqlLiteral(undefined)).toBeUndefined()
    expect(sqlLiteral(Number.NaN)).toBeUndefined()
    expect(sqlLiteral(Number.POSITIVE_INFINITY)).toBeUndefined()
    expect(sqlLiteral('a\0b')).toBeUndefined()
    expect(sqlLiteral(10n)).toBeUndefined()
    expect(sqlLiteral([1, 2])).toBeUndefined()
    expect(sqlLiteral(new Date(0))).toBeUndefined()
    expect(sqlLiteral({})).toBeUndefined()
  })
})

describe('inlineValues', () => {
  test('every placeholder gets its value, $10 is not $1', () => {
    const params = Array.from({ length: 10 }, (_, i) => i + 1)
    const text = `select ${params.map((_, i) => `$${i + 1}`).join(', ')}`
    expect(inlineValues(text, params)).toEqual({ text: 'select (1), (2), (3), (4), (5), (6), (7), (8), (9), (10)', params: [] })
    expect(inlineValues('select $1::int, $1::text', [7]).text).toBe('select (7)::int, (7)::text')
  })

  test('quoted text and comments are copied as they are', () => {
    const { text } = inlineValues(`select '$1', 'it''s $1', "a$1", $1 -- $1\n/* $1 */ , $2`, ['x', null])
    expect(text).toBe(`select '$1', 'it''s $1', "a$1", E'x' -- $1\n/* $1 */ , NULL`)
  })

  test('left with its parameters when a value, a placeholder or the text is beyond it', () => {
    const unchanged = (text: string, params: unknown[]) => expect(inlineValues(text, params)).toEqual({ text, params })
    unchanged('select $1', [[1, 2]])
    unchanged('select $1', ['a\0'])
    unchanged('select $2', [1])
    unchanged("select E'\\n', $1", [1])
    unchanged('select $$x$$, $1', [1])
    unchanged('select $tag$x$tag$, $1', [1])
    unchanged("select 'open, $1", [1])
    unchanged('select a$1', [1])
    expect(inlineValues('select 1', [])).toEqual({ text: 'select 1', params: [] })
  })
})
