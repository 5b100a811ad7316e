/** Webhook fixtures: a local receiver on loopback that records what it gets and answers per path. */
import { sql } from 'drizzle-orm'
import { call, type TestContext } from './context'

export interface Received {
  path: string
  headers: Record<string, string>
  body: string
  at: number
}

/** Per-path answers: statuses consumed in order (the last repeats), `sleep:<ms>` waits then answers 200. */
export type Answer = number | `sleep:${number}`

export interface Receiver {
  port: number
  received: Received[]
  plans: Map<string, Answer[]>
  url(path: string): string
  at(path: string): Received[]
  stop(): void
}

export function startReceiver(): Receiver {
  const received: Received[] = []
  const plans = new Map<string, Answer[]>()
  const server: ReturnType<typeof Bun.serve> = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req): Promise<Response> {
      const path = new URL(req.url).pathname
      received.push({ path, headers: Object.fromEntries(req.headers), body: await req.text(), at: Date.now() })
      const plan = plans.get(path) ?? [200]
      const next = plan.length > 1 ? plan.shift()! : plan[0]
      if (typeof next === 'string') {
        await Bun.sleep(Number(next.slice(6)))
        return new Response('ok')
      }
      return new Response(next === 204 ? null : 'ok', { status: next, headers: next >= 300 && next < 400 ? { location: `http://127.0.0.1:${server.port}/redirected` } : {} })
    },
  })
  return {
    port: server.port!,
    received,
    plans,
    url: (path) => `http://127.0.0.1:${server.port}${path}`,
    at: (path) => received.filter((r) => r.path === path),
    stop: () => server.stop(true),
  }
}

export async function createEndpoint(ctx: TestContext, key: string, url: string, enabledEvents: string[] = ['*']): Promise<{ id: number; secret: string }> {
  const res = await call(ctx.app, 'POST', '/v1/webhook_endpoints', { key, body: { url, enabled_events: enabledEvents } })
  if (res.status !== 201) throw new Error(`create endpoint: ${res.status} ${res.text}`)
  return { id: res.body.data.id, secret: res.body.data.secret }
}

export async function deliveriesOfEndpoint(ctx: TestContext, endpointId: number) {
  return [...await ctx.deps.database.db.execute<{ id: string; event_id: string; state: string; attempts: number }>(
    sql`select id, event_id, state, attempts from webhook_deliveries where endpoint_id = ${endpointId} order by created_at, id`,
  )]
}
