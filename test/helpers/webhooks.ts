/** Webhook fixtures: a local receiver on loopback that records what it gets and answers per path. */
import { sql } from 'drizzle-orm'
import { call, type TestContext } from './context'

export interface Received {
  path: string
  headers: Record<string, string>
  body: string
  at: number
}

/**
 * Per-path answers: statuses consumed in order (the last repeats); `hold` keeps the request
 * unanswered until `release(path)` (then 200), or until the client gives up.
 */
export type Answer = number | 'hold'

export interface Receiver {
  port: number
  received: Received[]
  plans: Map<string, Answer[]>
  url(path: string): string
  at(path: string): Received[]
  /** Requests to `path` held unanswered now. */
  held(path: string): number
  /** The most requests to `path` that were being answered at once. */
  mostInFlight(path: string): number
  /** Answers the requests held on `path` and every later one with 200. */
  release(path: string): void
  stop(): void
}

export function startReceiver(): Receiver {
  const received: Received[] = []
  const plans = new Map<string, Answer[]>()
  const flights = new Map<string, { now: number; most: number }>()
  const held = new Map<string, Set<() => void>>()
  const flightOf = (path: string) => flights.get(path) ?? flights.set(path, { now: 0, most: 0 }).get(path)!
  const hold = (path: string, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const waiting = held.get(path) ?? held.set(path, new Set()).get(path)!
      const done = () => {
        waiting.delete(done)
        resolve()
      }
      waiting.add(done)
      signal.addEventListener('abort', done)
    })
  const server: ReturnType<typeof Bun.serve> = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req): Promise<Response> {
      const path = new URL(req.url).pathname
      const flight = flightOf(path)
      flight.most = Math.max(flight.most, ++flight.now)
      try {
        received.push({ path, headers: Object.fromEntries(req.headers), body: await req.text(), at: Date.now() })
        const plan = plans.get(path) ?? [200]
        const next = plan.length > 1 ? plan.shift()! : plan[0]
        if (next === 'hold') {
          await hold(path, req.signal)
          return new Response('ok')
        }
        return new Response(next === 204 ? null : 'ok', {
          status: next,
          headers: next >= 300 && next < 400 ? { location: `http://127.0.0.1:${server.port}/redirected` } : {},
        })
      } finally {
        flight.now--
      }
    },
  })
  return {
    port: server.port!,
    received,
    plans,
    url: (path) => `http://127.0.0.1:${server.port}${path}`,
    at: (path) => received.filter((r) => r.path === path),
    held: (path) => held.get(path)?.size ?? 0,
    mostInFlight: (path) => flightOf(path).most,
    release(path) {
      plans.set(path, [200])
      for (const done of [...(held.get(path) ?? [])]) done()
    },
    stop: () => server.stop(true),
  }
}

export async function createEndpoint(ctx: TestContext, key: string, url: string, enabledEvents: string[] = ['*']): Promise<{ id: number; secret: string }> {
  const res = await call(ctx.app, 'POST', '/v1/webhook_endpoints', { key, body: { url, enabled_events: enabledEvents } })
  if (res.status !== 201) throw new Error(`create endpoint: ${res.status} ${res.text}`)
  return { id: res.body.data.id, secret: res.body.data.secret }
}

export async function deliveriesOfEndpoint(ctx: TestContext, endpointId: number) {
  return [
    ...(await ctx.deps.database.db.execute<{ id: string; event_id: string; state: string; attempts: number }>(
      sql`select id, event_id, state, attempts from webhook_deliveries where endpoint_id = ${endpointId} order by created_at, id`,
    )),
  ]
}
