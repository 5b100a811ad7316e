/**
 * The README's start command as a newcomer meets it: a clean clone, nothing answering at
 * DATABASE_URL and REDIS_URL (free local ports), `./run start` sets everything up, the service
 * becomes ready, and SIGTERM stops the service and then the PostgreSQL and Redis it started.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventually } from '../helpers/eventually'
import { freePort, ROOT } from '../helpers/processes'

let clone: string

async function git(args: string[], cwd = ROOT): Promise<string> {
  const proc = Bun.spawn(['git', ...args], { cwd, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`git ${args.join(' ')}: ${err}`)
  return out.trim()
}

beforeAll(async () => {
  // Committed files only, at this checkout's commit: what a newcomer clones. Under /tmp so the
  // postgres user can reach the cluster's directory when the tests run as root.
  clone = mkdtempSync(join(tmpdir(), 'run-clone-'))
  chmodSync(clone, 0o755) // mkdtemp's 0700 would keep the postgres user out
  await git(['clone', '-q', '--no-checkout', ROOT, clone])
  await git(['checkout', '-q', await git(['rev-parse', 'HEAD'])], clone)
}, 60_000)

afterAll(() => {
  if (clone) rmSync(clone, { recursive: true, force: true })
}, 60_000)

const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy()
      resolve(true)
    })
    socket.on('error', () => resolve(false))
  })

/** Running, not a zombie: an orphaned server may be reparented to a runner that reaps late. */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

/** pg_ctl stop returns once the pid file is gone, a moment before the postmaster exits. */
const exited = (pid: number): Promise<boolean> =>
  eventually(async () => !alive(pid), { timeoutMs: 10_000, intervalMs: 100, what: `process ${pid} to exit` }).then(
    () => true,
    () => false,
  )

function spawnRun(env: Record<string, string>) {
  const { DATABASE_URL: _db, REDIS_URL: _redis, PORT: _port, DATA_DIR: _data, ...inherited } = process.env
  return Bun.spawn(['./run', 'start'], { cwd: clone, env: { ...inherited, LOG_LEVEL: 'info', ...env }, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
}

/** `./run start` until /readyz answers 200, then SIGTERM: what it printed and the servers it ran. */
async function startServeStop(dbPort: number, redisPort: number) {
  const port = await freePort()
  const proc = spawnRun({
    DATABASE_URL: `postgres://postgres@127.0.0.1:${dbPort}/property_lead`,
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    PORT: String(port),
    QUEUE_PREFIX: `run-start-${port}`,
  })
  const stderr = new Response(proc.stderr).text()
  const stdout = new Response(proc.stdout).text()
  try {
    // The first start installs dependencies and creates a cluster: minutes on a loaded machine.
    const ready = await eventually(
      async () =>
        proc.exitCode !== null
          ? 'exited'
          : (await fetch(`http://127.0.0.1:${port}/readyz`).then(
              (r) => r.status === 200,
              () => false,
            )) && 'ready',
      { timeoutMs: 180_000, intervalMs: 250, what: './run start to be ready' },
    )
    if (ready === 'exited') throw new Error(`./run start exited ${await proc.exited}: ${await stderr}`)
    const postgresPid = Number(readFileSync(join(clone, '.data/postgres/postmaster.pid'), 'utf8').split('\n')[0])
    const redisPid = Number(readFileSync(join(clone, '.data/redis/redis.pid'), 'utf8').trim())
    const aliveWhileServing = [alive(postgresPid), alive(redisPid)]
    proc.kill('SIGTERM')
    const code = await proc.exited
    return { code, aliveWhileServing, stoppedAfter: [await exited(postgresPid), await exited(redisPid)], progress: await stderr, logs: await stdout }
  } finally {
    if (proc.exitCode === null) {
      proc.kill('SIGTERM')
      await proc.exited
    }
  }
}

describe('./run start in a clean clone', () => {
  test('starts private PostgreSQL and Redis where nothing answers, serves /readyz ' +
    '200, and stops them on SIGTERM; a second start creates nothing again', async () => {
    const [dbPort, redisPort] = [await freePort(), await freePort()]
    expect(await answers(dbPort)).toBe(false)
    expect(await answers(redisPort)).toBe(false)

    const first = await startServeStop(dbPort, redisPort)
    expect(first.code).toBe(0)
    expect(first.aliveWhileServing).toEqual([true, true])
    expect(first.stoppedAfter).toEqual([true, true])
    expect(await answers(dbPort)).toBe(false)
    expect(await answers(redisPort)).toBe(false)
    expect(existsSync(join(clone, '.data/redis/appendonlydir'))).toBe(true)
    for (const line of [
      '[run] dependencies (bun install --frozen-lockfile)',
      '[run] creating a PostgreSQL cluster in .data/postgres (first start only)',
      `[run] starting PostgreSQL on 127.0.0.1:${dbPort}`,
      `[run] starting Redis on 127.0.0.1:${redisPort}`,
      '[run] stopping Redis (.data/redis)',
      '[run] stopping PostgreSQL (.data/postgres)',
    ])
      expect(first.progress).toContain(line)
    expect(first.progress).not.toContain('installing')
    expect(first.logs).toContain('"msg":"api listening"')

    const second = await startServeStop(dbPort, redisPort)
    expect(second.code).toBe(0)
    expect(second.stoppedAfter).toEqual([true, true])
    expect(second.progress).toContain(`[run] starting PostgreSQL on 127.0.0.1:${dbPort}`)
    expect(second.progress).not.toContain('creating a PostgreSQL cluster')
  }, 240_000)

  test('a URL to another host is only waited for, with one clear error, and nothing is started', async () => {
    const proc = spawnRun({
      DATABASE_URL: 'postgres://postgres@db.invalid:5432/property_lead',
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      PORT: String(await freePort()),
      RUN_WAIT_SECONDS: '1',
    })
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
    expect(code).toBe(1)
    const lines = stderr.trim().split('\n')
    expect(lines.at(-1)).toBe(
      '[run] PostgreSQL does not answer at db.invalid:5432 after 1 s; it is on another host, so ./run does ' +
        'not start it: start it there, or set DATABASE_URL to this machine (127.0.0.1) to get a private one',
    )
    expect(stderr).not.toContain('starting PostgreSQL')
    expect(stderr).not.toContain('starting Redis')
  }, 120_000)

  // A missing package is made by a dpkg-query that knows no package, run as a user that is not root.
  test.if(process.getuid?.() === 0)('without root, a missing OS package → the exact sudo apt-get line on stdout, exit 1, nothing started', async () => {
    const fakeBin = mkdtempSync(join(tmpdir(), 'run-no-dpkg-'))
    try {
      writeFileSync(join(fakeBin, 'dpkg-query'), '#!/bin/sh\nexit 1\n', { mode: 0o755 })
      chmodSync(fakeBin, 0o755)
      const proc = Bun.spawn(
        [
          'runuser',
          '-u',
          'nobody',
          '--',
          'env',
          `PATH=${fakeBin}:${process.env.PATH}`,
          'HOME=/tmp',
          `DATABASE_URL=postgres://postgres@127.0.0.1:${await freePort()}/x`,
          './run',
          'start',
        ],
        { cwd: clone, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' },
      )
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
      expect(code).toBe(1)
      expect(stderr.trim()).toBe('[run] missing OS packages; run this, then ./run start again:')
      // ffmpeg and redis-server are found as commands; PostGIS is known only to dpkg.
      expect(stdout).toBe('sudo apt-get install -y postgresql-15-postgis-3\n')
    } finally {
      rmSync(fakeBin, { recursive: true, force: true })
    }
  })
})
