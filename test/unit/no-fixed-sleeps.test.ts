/**
 * Tests wait for conditions, not for time: a fixed sleep passes on an idle machine and fails on a
 * loaded one. A test waits by polling a condition within a bound (`eventually`, the one file
 * allowed to pause between checks), on a promise the code under test settles, or on a clock it
 * moves itself (test/helpers/held-timers.ts, `setSystemTime`); it never sets a timer of its own.
 * The fault harness (test/faults) keeps its clock on purpose, named: `pace()` for load and
 * faults, `until()` for its bounded polls.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const TEST_DIR = join(import.meta.dir, '..')
/** The only files outside test/faults that may pause: the bounded poll, and this file, which names the forms. */
const ALLOWED = new Set(['helpers/eventually.ts', 'unit/no-fixed-sleeps.test.ts'])
/** In test/faults, the one definition each of pace() and until() holds the harness's only sleeps. */
const FAULT_SLEEPS: Record<string, number> = { 'faults/load.ts': 1, 'faults/cluster.ts': 1 }

const SLEEP = /\bBun\.sleep(Sync)?\(|(?<![\w.])sleep\(/
const TIMER = /\bsetTimeout\(/

const files = [...new Bun.Glob('**/*.{ts,tsx,js,mjs}').scanSync({ cwd: TEST_DIR })].sort()

function matches(file: string, pattern: RegExp): string[] {
  return readFileSync(join(TEST_DIR, file), 'utf8')
    .split('\n')
    .flatMap((line, i) => (pattern.test(line) ? [`test/${file}:${i + 1}: ${line.trim()}`] : []))
}

describe('no fixed sleeps in tests', () => {
  test('the scan sees the test files', () => {
    expect(files).toContain('helpers/eventually.ts')
    expect(files.length).toBeGreaterThan(100)
  })

  test('outside test/faults, no test sleeps or sets a timer: it waits for a condition', () => {
    const found = files.filter((f) => !f.startsWith('faults/') && !ALLOWED.has(f)).flatMap((f) => matches(f, new RegExp(`${SLEEP.source}|${TIMER.source}`)))
    expect(found).toEqual([])
  })

  test('in test/faults, the clock is used only through pace() and until()', () => {
    const counts = Object.fromEntries(
      files
        .filter((f) => f.startsWith('faults/'))
        .map((f) => [f, matches(f, SLEEP).length])
        .filter(([, n]) => n !== 0),
    )
    expect(counts).toEqual(FAULT_SLEEPS)
  })
})
