/** What the README promises a newcomer, checked against the code it describes. */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { OPERATIONS } from '../../shared/access/operations'

const README = readFileSync(join(import.meta.dir, '../../README.md'), 'utf8')

describe('README', () => {
  test('the Idempotency-Key convention names exactly the operations that honour it', () => {
    const bullet = README.split('\n- ').find((b) => b.startsWith('**Idempotency-Key**'))!
    const named = [...bullet.slice(0, bullet.indexOf('): ')).matchAll(/`(\w+)`/g)].map((m) => m[1]).sort()
    const honouring = Object.entries(OPERATIONS).filter(([, op]) => op.idempotent).map(([id]) => id).sort()
    expect(named).toEqual(honouring)
  })

  test('the quick start gives the two commands, and both exist', () => {
    const quickStart = README.slice(README.indexOf('## Quick start'), README.indexOf('\n## ', README.indexOf('## Quick start') + 1))
    const commands = [...quickStart.matchAll(/```sh\n(\.\/run \w+)/g)].map((m) => m[1])
    expect(commands).toEqual(['./run start', './run test'])
    expect(readFileSync(join(import.meta.dir, '../../.ci/run'), 'utf8')).toContain('run" test')
  })
})
