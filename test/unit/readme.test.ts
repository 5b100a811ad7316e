/** What the README promises a newcomer, checked against the code it describes. */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { OPERATIONS } from '../../shared/access/operations'

const ROOT = join(import.meta.dir, '../..')
const README = readFileSync(join(ROOT, 'README.md'), 'utf8')

/** The text of a `## heading` section, up to the next `## `. */
function section(heading: string): string {
  const start = README.indexOf(`\n## ${heading}\n`)
  expect(start, `no section "## ${heading}"`).toBeGreaterThanOrEqual(0)
  const end = README.indexOf('\n## ', start + 1)
  return README.slice(start, end < 0 ? undefined : end)
}

describe('README', () => {
  test('the Idempotency-Key convention names exactly the operations that honour it', () => {
    const bullet = README.split('\n- ').find((b) => b.startsWith('**Idempotency-Key**'))!
    const named = [...bullet.slice(0, bullet.indexOf('): ')).matchAll(/`(\w+)`/g)].map((m) => m[1]).sort()
    const honouring = Object.entries(OPERATIONS)
      .filter(([, op]) => op.idempotent)
      .map(([id]) => id)
      .sort()
    expect(named).toEqual(honouring)
  })

  test('the quick start gives the two commands, and both exist', () => {
    const commands = [...section('Quick start').matchAll(/```sh\n(\.\/run \w+)/g)].map((m) => m[1])
    expect(commands).toEqual(['./run start', './run test'])
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toContain('run" test')
  })

  test('the API table lists every operation once, with its method, path and scope', () => {
    const rows = [...section('The API at a glance').matchAll(/^\| (\w+) \| `(GET|POST|PATCH|PUT|DELETE|OPTIONS) ([^`]+)`[^|]* \| ([^|]+) \|/gm)]
    const listed = rows.map(([, id, method, path, scope]) => ({
      id,
      method,
      path: `/v1${path.replace(/\{(\w+)\}/g, ':$1')}`,
      scope: scope.trim().startsWith('any ') ? 'any' : scope.trim(),
    }))
    const expected = Object.entries(OPERATIONS).map(([id, op]) => ({ id, method: op.method, path: op.path, scope: op.scope }))
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id)
    expect(listed.sort(byId)).toEqual(expected.sort(byId))
  })

  test('the configuration table names every variable shared/platform/config.ts reads, and no other', () => {
    const source = readFileSync(join(ROOT, 'shared/platform/config.ts'), 'utf8')
    const read = new Set([...source.matchAll(/env\.([A-Z][A-Z0-9_]+)|\(env, '([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1] ?? m[2]))
    expect(read.size).toBeGreaterThan(40)
    const table = section('Configuration')
      .split('\n')
      .filter((line) => line.startsWith('| `'))
    const named = new Set(table.flatMap((row) => [...row.split(' | ')[0].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1])))
    expect([...named].sort()).toEqual([...read].sort())
  })

  test('generating types with openapi-typescript: the README gives the option clients/typescript/generate.ts uses', () => {
    expect(readFileSync(join(ROOT, 'clients/typescript/generate.ts'), 'utf8')).toContain('defaultNonNullable: false')
    expect(README).toContain('--default-non-nullable false')
  })
})
