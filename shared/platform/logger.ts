/** Structured JSON logs, one object per line. Callers pass ids and figures, never secrets. */
import { writeSync } from 'node:fs'
import type { Config } from './config'

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const
type Level = Exclude<keyof typeof LEVELS, 'silent'>

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
  child(fields: Record<string, unknown>): Logger
}

/**
 * Lines for stdout, written together once per turn of the event loop: one write per request cost
 * the ingest path a system call per request (a burst answers many requests in one turn). Whatever
 * is pending is written synchronously when the process exits (process.exit, a drained shutdown);
 * only a SIGKILL can lose the current turn's lines.
 */
let pending = ''
let flushScheduled = false
/** Writes the pending lines now (before telling another process something they announce). */
export function flushPending(): void {
  flushScheduled = false
  if (!pending) return
  const text = pending
  pending = ''
  process.stdout.write(text)
}
process.on('exit', () => {
  if (pending) writeSync(1, pending)
  pending = ''
})
function writeStdout(line: string): void {
  pending += line
  if (flushScheduled) return
  flushScheduled = true
  setImmediate(flushPending)
}

export function createLogger(level: Config['logLevel'] = 'info', base: Record<string, unknown> = {}, write: (line: string) => void = writeStdout): Logger {
  const threshold = LEVELS[level]
  const emit = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < threshold) return
    const line = { time: new Date().toISOString(), level: lvl, msg, ...base, ...fields }
    // A replacer is a call per key: the request line of every request (flat strings and numbers)
    // does without it, and only a line holding an object pays for the search for errors in it.
    write(`${hasObjectField(line) ? JSON.stringify(line, errorReplacer) : JSON.stringify(line)}\n`)
  }
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  }
}

function hasObjectField(line: Record<string, unknown>): boolean {
  for (const key in line) {
    const value = line[key]
    if (value !== null && typeof value === 'object') return true
  }
  return false
}

/**
 * An error as a log field, with its cause: drizzle wraps every driver error in "Failed query: …",
 * and what an operator needs (the SQLSTATE or driver code, the severity, the server's message) is
 * in the cause.
 */
function errorReplacer(_key: string, value: unknown) {
  if (!(value instanceof Error)) return value
  const { code, severity_local, severity = severity_local } = value as { code?: unknown; severity?: unknown; severity_local?: unknown }
  return {
    name: value.name,
    message: value.message,
    code,
    ...(severity ? { severity } : {}),
    stack: value.stack,
    ...(value.cause !== undefined ? { cause: value.cause } : {}),
  }
}
