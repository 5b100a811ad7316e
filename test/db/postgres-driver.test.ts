/**
 * The postgres.js defects patched in patches/postgres@3.4.9.patch, each reproduced against the
 * real PostgreSQL. Without the patch the buffered-write test ends in CONNECT_TIMEOUT, the
 * terminated-backend and gone-socket tests fail (a query left unsettled, a TypeError thrown from
 * a timer), and the server-error test's next query fails with the old connection's 57P01. The
 * destroyed-socket test passes either way: it pins down behaviour the patch must keep (a socket
 * destroyed before its close event fails its query, and nothing is thrown).
 */
import { afterAll, describe, expect, test } from 'bun:test'
import net from 'node:net'
import postgres from 'postgres'
import { eventually } from '../helpers/eventually'

const url = process.env.DATABASE_URL!
const { hostname, port } = new URL(url)
const opened: postgres.Sql[] = []

// `socket` (a connected socket factory) is a driver option its type declarations leave out.
function pool(options: postgres.Options<Record<string, never>> & { socket?: () => Promise<net.Socket> } = {}): postgres.Sql {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {}, ...options })
  opened.push(sql)
  return sql
}

/** A connected-socket factory for the driver's `socket` option that keeps every socket it made. */
const connectTo = (sockets: net.Socket[]) => () =>
  new Promise<net.Socket>((resolve, reject) => {
    const socket = net.connect(Number(port || 5432), hostname)
    sockets.push(socket)
    socket.once('connect', () => resolve(socket))
    socket.once('error', reject)
  })

const code = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error) => (error as { code?: string }).code ?? String(error),
  )

/** A promise of the next time the pool has handled a connection's close (the driver's `onclose`). */
function closes() {
  let next: { resolve: () => void; promise: Promise<void> } | undefined
  return {
    onclose: () => next?.resolve(),
    /** Call before causing the close; resolves once the driver has handled it. */
    next(): Promise<void> {
      let resolve!: () => void
      const promise = new Promise<void>((r) => (resolve = r))
      next = { resolve, promise }
      return promise
    },
  }
}

/**
 * A one-connection pool whose socket `cut` breaks while the next query marked `cut_here` is being
 * built: after its bytes are scheduled for writing and before the write runs, as when a
 * restarting server drops a connection in the middle of a burst.
 */
function poolCutAtMarkedQuery(cut: (socket: net.Socket) => void) {
  const sockets: net.Socket[] = []
  const closed = closes()
  let armed = false
  const sql = pool({
    socket: connectTo(sockets),
    onclose: closed.onclose,
    debug: (_connection: number, text: string) => {
      if (!armed || !text.includes('cut_here')) return
      armed = false
      const socket = sockets.at(-1)!
      process.nextTick(() => cut(socket))
    },
  })
  return { sql, sockets, arm: () => (armed = true), closeHandled: () => closed.next() }
}

/**
 * Runs `fn` and returns the uncaught exceptions the process saw meanwhile. The driver defers its
 * writes to an immediate (nextWrite), so one more turn of the immediates lets a throw from a
 * write `fn` left queued surface here.
 */
async function uncaughtDuring(fn: () => Promise<void>): Promise<unknown[]> {
  const uncaught: unknown[] = []
  const record = (error: unknown) => uncaught.push(error)
  process.on('uncaughtException', record)
  try {
    await fn()
    await new Promise((r) => setImmediate(r))
    return uncaught
  } finally {
    process.off('uncaughtException', record)
  }
}

/** A reserved connection of a fresh pool whose backend has just been terminated, and the driver's handling of its close. */
async function terminatedReservedConnection() {
  const closed = closes()
  const sql = pool({ max: 2, onclose: closed.onclose })
  const admin = pool()
  const reserved = await sql.reserve()
  const [{ pid }] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`
  const closeHandled = closed.next()
  await admin`select pg_terminate_backend(${pid})`
  return { sql, reserved, closeHandled }
}

afterAll(async () => {
  await Promise.all(opened.map((sql) => sql.end({ timeout: 1 })))
})

describe('postgres.js after its socket closes', () => {
  test('a socket that closes with a write still buffered leaves a connection that reconnects and answers', async () => {
    const { sql, sockets, arm } = poolCutAtMarkedQuery((socket) => {
      socket.emit('close', false)
      socket.destroy()
    })
    expect([...(await sql`select 1 as n`)]).toEqual([{ n: 1 }])
    arm()
    expect(await code(sql`select 1 as cut_here`)).toBe('CONNECTION_CLOSED')
    const [{ n }] = await sql<{ n: number }[]>`select 2 as n`
    expect(n).toBe(2)
    expect(sockets.length).toBe(2)
  }, 10_000)

  test('a write to a socket destroyed before its close event rejects the query instead of throwing', async () => {
    const uncaught = await uncaughtDuring(async () => {
      // Destroyed after the write was scheduled and before it runs; the close event follows.
      const { sql, arm, closeHandled } = poolCutAtMarkedQuery((socket) => socket.destroy())
      expect([...(await sql`select 1 as n`)]).toEqual([{ n: 1 }])
      const handled = closeHandled()
      arm()
      expect(await code(sql`select 1 as cut_here`)).toBe('CONNECTION_CLOSED')
      // Until the close event is handled the pool still counts the connection as usable (a query
      // sent meanwhile fails the same way); after it, the pool reconnects and serves.
      await handled
      expect([...(await sql`select 2 as n`)]).toEqual([{ n: 2 }])
    })
    expect(uncaught).toEqual([])
  }, 10_000)

  test("an error the server sent before closing fails that socket's query, not the next connection's", async () => {
    // PostgreSQL's fast shutdown sends 57P01 to every backend and closes: a query in flight gets
    // the error, and no ReadyForQuery follows. The fault harness met it as one 503 a few seconds
    // after the restart, on the first query of the reconnected connection.
    const sql = pool({ max: 1 })
    const admin = pool()
    const [{ pid }] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`
    const sleeping = code(sql`select pg_sleep(5)`)
    // Terminated while the query runs on the server, not before it arrived.
    await eventually(
      async () => (await admin`select 1 from pg_stat_activity where pid = ${pid} and state = 'active' and wait_event = 'PgSleep'`).length === 1,
      { intervalMs: 5, what: 'the query to run on its backend' },
    )
    await admin`select pg_terminate_backend(${pid})`
    expect(await sleeping).toBe('57P01')
    expect([...(await sql`select 2 as n`)]).toEqual([{ n: 2 }])
  }, 10_000)

  test("with several hosts, a new connection's first query settles when its backend dies while it runs", async () => {
    // The pool keeps a connection in `connecting` until its first query is answered; a failure then
    // was taken for a host to skip (patch §6) and the query was never settled. In the fault harness
    // (scenario j) an ingest store on a connection opened just before kill -9 of the primary waited
    // for ever, its jobs active and their leads never stored.
    const u = new URL(url)
    const hostPort = `${u.hostname}:${u.port || 5432}`
    const multiHost = `${u.protocol}//${u.username ? `${u.username}@` : ''}${hostPort},${hostPort}${u.pathname}?target_session_attrs=read-write`
    const name = `driver-first-query-${process.pid}-${Date.now()}`
    const sql = postgres(multiHost, { max: 1, connect_timeout: 3, onnotice: () => {}, connection: { application_name: name } })
    opened.push(sql)
    const admin = pool()
    const sleeping = code(sql`select pg_sleep(5)`)
    const [{ pid }] = await eventually(
      async () => {
        const rows = await admin<{ pid: number }[]>`select pid from pg_stat_activity where application_name = ${name} and wait_event = 'PgSleep'`
        return rows.length === 1 ? rows : undefined
      },
      { intervalMs: 5, what: 'the first query to run on its backend' },
    )
    await admin`select pg_terminate_backend(${pid})`
    expect(await sleeping).toBe('57P01')
    expect([...(await sql`select 2 as n`)]).toEqual([{ n: 2 }])
  }, 10_000)

  test('queries sent to a terminated backend before its close is seen are settled, not left waiting', async () => {
    const { sql, reserved } = await terminatedReservedConnection()
    const first = await code(reserved`select 1`)
    const second = await code(reserved`select 1`)
    expect(['ECONNRESET', 'CONNECTION_CLOSED', '57P01']).toContain(first)
    expect(['ECONNRESET', 'CONNECTION_CLOSED', '57P01']).toContain(second)
    // The pool itself still serves.
    expect([...(await sql`select 3 as n`)]).toEqual([{ n: 3 }])
  }, 10_000)

  test('a write on a connection whose socket is gone rejects its query instead of throwing', async () => {
    const uncaught = await uncaughtDuring(async () => {
      const { reserved, closeHandled } = await terminatedReservedConnection()
      // Once the close has been handled, the next write finds no socket.
      await closeHandled
      expect(await code(reserved`select 1`)).toBe('CONNECTION_CLOSED')
    })
    expect(uncaught).toEqual([])
  }, 10_000)
})
