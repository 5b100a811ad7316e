/**
 * The few places where the HTTP tier reads Elysia objects beyond its documented lifecycle API:
 * a validation error's individual issues, the matched route of a finished request, the routes'
 * parse hooks while the OpenAPI document is generated, and a mapResponse hook's answer as text. Each is read here and only here,
 * and test/api/elysia-adapter.test.ts exercises every one against the installed Elysia, so an
 * upgrade that changes them fails that test loudly instead of every request quietly.
 */
import type { AnyElysia, ValidationError } from 'elysia'
import type { ValueError } from '@sinclair/typebox/errors'
import { innermostErrors, issueOf, type ValidationIssue } from '../shared/platform/validation'

export interface ValidationFailure {
  /** Elysia's name for what failed: 'body', 'query', 'params', 'headers', 'cookie', or 'property'
   * for its own string→number step of a path or query value (which names no parameter). */
  target: string
  /** The value that failed (for 'property', the raw parameter value). */
  value: unknown
  /** The schema that failed, when Elysia says. */
  schema: Record<string, unknown>
  issues: ValidationIssue[]
}

export function validationFailure(error: ValidationError): ValidationFailure {
  let all: ValueError[] = []
  try {
    // A getter that runs the validator again (its items are TypeBox's ValueErrors with a
    // summary added); it throws for values it cannot describe.
    all = (error.all as unknown as ValueError[]) ?? []
  } catch {
    all = []
  }
  return {
    target: error.type,
    value: error.value,
    schema: (error.validator as { schema?: Record<string, unknown> } | undefined)?.schema ?? {},
    issues: [...innermostErrors(all)].map(issueOf),
  }
}

/**
 * A mapResponse hook's answer given as text: Elysia answers it with `set` as it is (status and
 * headers), one Response. A Response made by the hook is copied by Elysia into a second one,
 * every field of `set.headers` merged in again (1.2–1.6 µs an answer with 3 to 8 fields). Elysia's
 * types ask the hook for a Response; its answer goes through the same mapping as a handler's
 * value, where a string is taken.
 */
export function mappedText(text: string): Response {
  return text as unknown as Response
}

/** The matched route path of a request (`/v1/properties/:property_id`), or undefined when none matched. */
export function matchedRoute(context: object): string | undefined {
  const route = (context as { route?: unknown }).route
  return typeof route === 'string' && route !== '' ? route : undefined
}

/**
 * Runs `generate` with every route's function parse hooks hidden: @elysiajs/openapi lists no
 * request content type for a route with one (plugins/http.ts parses the JSON body it already
 * read). Synchronous, so no request ever sees the routes without them.
 */
export function withoutParseFunctions<T>(app: AnyElysia, generate: () => T): T {
  const saved = app.routes.map((route) => {
    const hooks = route.hooks as { parse?: { fn: unknown }[] } | undefined
    const parse = hooks?.parse
    if (hooks && parse) {
      const rest = parse.filter((p) => typeof p.fn !== 'function')
      hooks.parse = rest.length ? rest : undefined
    }
    return [hooks, parse] as const
  })
  try {
    return generate()
  } finally {
    for (const [hooks, parse] of saved) if (hooks) hooks.parse = parse
  }
}

/**
 * The route pattern a method and path would match, for a request refused before Elysia routed
 * it (the http plugin's 401 comes in onRequest): its metrics and log line keep the route label
 * instead of `unmatched`. Reads `app.routes` once, on first use, when every route is registered;
 * a path that no route takes stays undefined, so labels never grow with what clients send.
 */
export function routeFinder(appOf: () => AnyElysia): (method: string, path: string) => string | undefined {
  let table: { method: string; pattern: string; parts: string[]; statics: number }[] | undefined
  return (method, path) => {
    table ??= appOf()
      .routes.map((r) => ({ method: r.method, pattern: r.path, parts: r.path.split('/') }))
      .map((r) => ({ ...r, statics: r.parts.filter((p) => !p.startsWith(':') && p !== '*').length }))
      // `/v1/leads/inquiries` before `/v1/leads/:lead_id`: the more literal segments, the better the match.
      .sort((a, b) => b.statics - a.statics)
    const segments = path.split('/')
    return table.find((r) => (r.method === method || r.method === 'ALL') && matchesPattern(r.parts, segments))?.pattern
  }
}

function matchesPattern(parts: string[], segments: string[]): boolean {
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] === '*') return true
    if (i >= segments.length) return false
    if (parts[i].startsWith(':') ? segments[i] === '' : parts[i] !== segments[i]) return false
  }
  return parts.length === segments.length
}
