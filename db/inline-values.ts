/**
 * A statement's `$n` placeholders replaced by its values written as SQL literals, so that it goes
 * to PostgreSQL without parameters. postgres.js sends a statement with parameters unnamed
 * (`prepare: false`, for PgBouncer) in two round trips: Parse+Describe, then, once the server has
 * answered with the parameter types, Bind+Execute. Without parameters it sends Parse, Bind and
 * Execute at once: one round trip, and one wake-up fewer of the process and of the backend
 * (docs/performance.md "Unnamed statements"). The server plans either with the actual values; a
 * literal takes its type from its context as a parameter would.
 *
 * Only values whose literal is exact are written in: null, booleans, finite numbers and strings
 * without NUL (PostgreSQL's text cannot hold one, and the query text is NUL-terminated). A string
 * is written as an escape string (E'…', every backslash and quote doubled), which reads the same
 * whatever `standard_conforming_strings` is. With any other value (undefined too, which
 * postgres.js refuses) the statement is returned as it was, to go with its parameters.
 */
import type { Sql } from './client'

/** The literal of a value, or undefined when it has none that is exact. */
export function sqlLiteral(value: unknown): string | undefined {
  if (value === null) return 'NULL'
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'number') return Number.isFinite(value) ? `(${value})` : undefined
  if (typeof value === 'string') return value.includes('\0') ? undefined : `E'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`
  return undefined
}

/**
 * The statement with every `$n` outside quoted text (a 'literal', a "name") and comments replaced by the
 * literal of params[n − 1] and no parameters left, or the statement unchanged when a value has no
 * exact literal or a placeholder has no value.
 */
export function inlineValues(text: string, params: readonly unknown[]): { text: string; params: readonly unknown[] } {
  // A backslash (an escape string's \') or dollar quoting would need a real lexer: left as it is.
  if (params.length === 0 || /\\|\$[A-Za-z_]*\$/.test(text)) return { text, params }
  const literals: string[] = []
  for (const value of params) {
    const literal = sqlLiteral(value)
    if (literal === undefined) return { text, params }
    literals.push(literal)
  }
  let out = ''
  let from = 0
  const special = /['"]|--[^\n]*|\/\*[\s\S]*?\*\/|\$([0-9]+)/g
  for (let m = special.exec(text); m; m = special.exec(text)) {
    out += text.slice(from, m.index)
    if (m[0][0] === '-' || m[0][0] === '/') {
      // A comment, copied as it is.
      out += m[0]
      from = special.lastIndex
      continue
    }
    if (m[1] !== undefined) {
      // `x$1` is a name (PostgreSQL allows `$` in one), not a placeholder.
      if (m.index > 0 && /[\w$]/.test(text[m.index - 1])) return { text, params }
      const literal = literals[Number(m[1]) - 1]
      if (literal === undefined) return { text, params }
      out += literal
      from = special.lastIndex
      continue
    }
    // A quoted run ends at the next lone quote of its kind ('' and "" are escaped quotes).
    const quote = m[0]
    let end = m.index + 1
    for (;;) {
      end = text.indexOf(quote, end)
      if (end === -1) return { text, params }
      if (text[end + 1] !== quote) break
      end += 2
    }
    out += text.slice(m.index, end + 1)
    from = special.lastIndex = end + 1
  }
  out += text.slice(from)
  return { text: out, params: [] }
}

/**
 * How an inlined statement is sent. `simple: false`: the extended protocol without parameters
 * too (postgres.js sends a parameterless `unsafe` as a simple Query message, which may carry
 * several statements; Parse takes exactly one). `onexecute` answering false: the connection takes
 * no other statement until this one is answered, as with any statement with parameters (whose
 * Describe postgres.js awaits). Otherwise the pool pipelines it onto a busy connection, behind a
 * statement that may be slow while other connections idle: with pipelining the catalogue's p95
 * rose (20k listings, c=16, a price range: 27–33 → 47–73 ms) while its p50 fell. The pool's
 * `max_pipeline: 0` would do the same for every statement but stalls postgres.js's transactions.
 */
const SEND_ALONE = { simple: false, onexecute: () => false } as unknown as { prepare: false }

/** Runs the statement with its values inlined (`inlineValues`), its rows as the raw bytes PostgreSQL sent. */
export function queryInlinedRaw(sql: Sql, text: string, params: readonly unknown[]) {
  const statement = inlineValues(text, params)
  return sql.unsafe(statement.text, statement.params as never[], SEND_ALONE).raw()
}
