/**
 * Contract §6 paths (decided in §15): a request whose path holds a `.` or `..` segment, written
 * plainly or percent-encoded in any case (`%2e%2e`, `.%2E`), is a 404 before any route runs, so
 * it never reaches the parent resource.
 *
 * Bun gives the fetch handler `request.url` as the URL parser makes it, with those segments
 * already resolved: `DELETE /v1/properties/4/videos/%2e%2e` arrives as `/v1/properties/4/`, which
 * the property route takes. Only Bun.serve's own `routes` match the request target as sent,
 * handing each `:name` segment to the handler percent-decoded. So every request is routed through
 * patterns of one to MAX_SEGMENTS named segments (each also with a trailing slash), whose handler
 * looks at the segments; a target no pattern takes (an empty segment, more segments than any
 * route has) is refused too, since only its resolved form is left to look at.
 * test/security/dot-segments.test.ts sends every spelling over a raw socket (HTTP clients
 * resolve dot segments before sending, so only a raw request shows this).
 */
import type { AnyElysia } from 'elysia'

/** More segments than any route of the API has (the deepest, an upload's completion, has 7). */
const MAX_SEGMENTS = 16

const refused = new WeakSet<Request>()

/** The request's target held a dot segment (or could not be read as sent): it is a 404 whatever it names. */
export const isRefusedPath = (request: Request): boolean => refused.has(request)

/**
 * A decoded segment the URL parser would resolve: `.` or `..`, or one holding a backslash, which
 * the parser reads as `/` (so `x\..` is `x/..`; a backslash has no use in any of our paths).
 */
export function isDotSegment(segment: string): boolean {
  return segment === '.' || segment === '..' || segment.includes('\\')
}

type Handler = (request: Request) => Response | Promise<Response>

/**
 * Bun.serve's `routes` and `fetch` for `serve`: literal paths of `app` go straight to it (a
 * target equal to a literal path has no dot segment); any other target is looked at segment by
 * segment first, and a refused one reaches `serve` marked, so it is answered by the app's
 * error path (problem+json, request id, log line, metrics) before routing.
 */
export function rawPathRouting(app: AnyElysia, serve: Handler): { routes: Record<string, Handler>; fetch: Handler } {
  const refuse: Handler = (request) => {
    refused.add(request)
    return serve(request)
  }
  const checked = (request: Request) => {
    const params = (request as Request & { params: Record<string, string> }).params
    for (const name in params) if (isDotSegment(params[name])) return refuse(request)
    return serve(request)
  }
  const routes: Record<string, Handler> = { '/': serve }
  for (let n = 1; n <= MAX_SEGMENTS; n++) {
    const pattern = Array.from({ length: n }, (_, i) => `/:s${i}`).join('')
    routes[pattern] = checked
    routes[`${pattern}/`] = checked
  }
  for (const route of app.routes) if (!/[:*]/.test(route.path)) routes[route.path] = serve
  return { routes, fetch: refuse }
}
