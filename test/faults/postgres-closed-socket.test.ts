import { describe, expect, test } from 'bun:test'
import { isPostgresClosedSocketWrite } from '../../shared/lifecycle'
import { ROOT } from '../helpers/processes'

describe('postgres.js closed-socket write (porsager/postgres#1208)', () => {
  test('only that TypeError is recognised', () => {
    const race = new TypeError("null is not an object (evaluating 'socket.write')")
    race.stack = `TypeError: null is not an object (evaluating 'socket.write')\n    at nextWrite (/app/node_modules/postgres/src/connection.js:255:15)`
    expect(isPostgresClosedSocketWrite(race)).toBe(true)
    const other = new TypeError('x is undefined')
    expect(isPostgresClosedSocketWrite(other)).toBe(false)
    const elsewhere = new Error('nextWrite')
    elsewhere.stack = 'Error: nextWrite\n    at nextWrite (/app/node_modules/postgres/src/connection.js:255:15)'
    expect(isPostgresClosedSocketWrite(elsewhere)).toBe(false)
  })

  test('a process with the entry handlers survives it and still queries', async () => {
    const proc = Bun.spawn(['bun', 'run', 'test/faults/fixtures/closed-socket-write.ts'], { cwd: ROOT, env: { ...process.env }, stdout: 'pipe', stderr: 'pipe' })
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    expect(code, err + out).toBe(0)
    expect(out).toContain('{"survived":true,"query":1}')
  }, 20_000) // a fresh bun process and its PostgreSQL connections: over 5 s on a loaded CI machine
})
