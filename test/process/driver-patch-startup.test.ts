/**
 * The service refuses to start on an unpatched postgres.js (patches/README.md): api, worker, main
 * and the migrator exit 1 with one line that says so and how to fix it. The unpatched driver is
 * the package's own CommonJS build, which the patch leaves as released
 * (test/process/unpatched-driver.ts redirects the import to it).
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DRIVER_PATCH, driverPatchProblem } from '../../shared/platform/driver-patch'
import { freePort, ROOT, run } from '../helpers/processes'

const UNPATCHED = join(ROOT, 'node_modules/postgres/cjs/src/index.js')

describe('the driver patch at start-up', () => {
  test('the driver Bun loads carries the mark that patches/postgres@3.4.9.patch sets', () => {
    expect(driverPatchProblem()).toBeUndefined()
    expect(readFileSync(join(ROOT, 'patches/postgres@3.4.9.patch'), 'utf8')).toContain(`Postgres.patched = '${DRIVER_PATCH}'`)
  })

  test('an unpatched postgres.js 3.4.9 is recognised', async () => {
    const unpatched = (await import(UNPATCHED)).default
    expect(typeof unpatched).toBe('function')
    expect(driverPatchProblem(unpatched)).toStartWith('the PostgreSQL driver (postgres.js) is not patched: no patch mark')
    expect(driverPatchProblem(Object.assign(() => {}, { patched: 'property-lead-api/postgres@3.4.9 r1' }))).toContain(
      'patch mark "property-lead-api/postgres@3.4.9 r1"',
    )
  })

  test('api, worker, main and the migrator refuse to start on it: one line, exit 1', async () => {
    for (const entry of ['api/index.ts', 'worker/index.ts', 'main.ts', 'cli/migrate.ts']) {
      const { stderr, code } = await run(['--preload', './test/process/unpatched-driver.ts', entry], { NODE_ENV: 'test', PORT: String(await freePort()) })
      expect(code, entry).toBe(1)
      const lines = stderr.trim().split('\n')
      expect(lines, entry).toHaveLength(1)
      expect(lines[0], entry).toStartWith('the PostgreSQL driver (postgres.js) is not patched')
      expect(lines[0], entry).toContain('bun install')
    }
  })
})
