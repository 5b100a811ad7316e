/**
 * Schemas shared by every route: problem bodies (contract §6), path ids, the created-resource
 * answer (api-spec §2.6). Response schemas use TypeBox's plain Integer so the OpenAPI document
 * says `integer`, not Elysia's string-or-number coercion type (conventions §13).
 */
import { Type as T, type TSchema } from '@sinclair/typebox'
import { t } from 'elysia'

export const Problem = T.Object(
  {
    type: T.String({ description: 'URI reference naming the problem type, e.g. `urn:problem-type:not-found`.' }),
    title: T.String(),
    status: T.Integer(),
    detail: T.String({ description: 'Human-readable explanation; always present.' }),
    code: T.String({ description: 'Stable machine-readable error code.' }),
    request_id: T.String({ description: 'Same value as the X-Request-Id response header.' }),
    existing_id: T.Optional(T.Integer({ description: 'On 409 Duplicate contact: id of the contact that already exists.' })),
  },
  { $id: '#/components/schemas/Problem', additionalProperties: true, title: 'Problem' },
)

export const ValidationProblem = T.Object(
  {
    type: T.String(),
    title: T.String(),
    status: T.Literal(422),
    detail: T.String(),
    code: T.String(),
    request_id: T.String(),
    errors: T.Array(
      T.Object({
        loc: T.Array(T.Union([T.String(), T.Integer()]), {
          description: 'Where the error is: `["body","pricing","sale"]`, `["query","limit"]`, `["path","property_id"]`.',
        }),
        msg: T.String(),
        type: T.String(),
      }),
    ),
  },
  { additionalProperties: true, title: 'ValidationProblem' },
)

const problem = (description: string, schema: TSchema = Problem) => ({ description, content: { 'application/problem+json': { schema } } })

/** OpenAPI `responses` for the error statuses every /v1 operation can answer (api-spec §4, §7). */
export const errorResponses = {
  401: problem('The API key is missing, malformed, unknown, revoked or expired.'),
  403: problem('The API key lacks the scope this operation requires.'),
  404: problem('The resource does not exist in this business.'),
  409: problem('Duplicate contact, or an Idempotency-Key reused with a different payload.'),
  413: problem('The request body is larger than 1 MiB.'),
  422: problem('A path parameter, query parameter, header or body field is invalid.', ValidationProblem),
  500: problem('Unexpected server error.'),
  503: problem('PostgreSQL or Redis is temporarily unreachable; retry later.'),
}

/** Ids are PostgreSQL `integer`s: larger numbers can name no row and would fail in SQL. */
export const MAX_ID = 2_147_483_647

/**
 * contract §15 §3 prices: a price or budget (euros) is at most ten thousand million, else a 422
 * on the field. Far above any real listing, and low enough that no output ever writes one in
 * exponent notation (JavaScript does from 1e21, PostgreSQL's float8 text from 1e15).
 */
export const MAX_PRICE = 10_000_000_000
export const Price = (description: string) => T.Number({ minimum: 0, maximum: MAX_PRICE, description: `${description} At most 10,000,000,000.` })

/** A path id as written: decimal digits without sign, leading zero, spaces or exponent (contract §6). */
const PATH_ID_RE = /^[1-9][0-9]{0,9}$/

/**
 * Path ids as numbers before validation. Elysia's own string→number step takes anything
 * `Number()` takes (`0x1`, `1e0`, `+1`, ` 1` were all id 1) and reports a violation without the
 * parameter's name, while contract §6 wants `loc: ["path","<name>"]`. Any other spelling becomes
 * NaN, which the id schema refuses at validation: a 422 on the path, after the scope check (a
 * transform that threw here would run before it and beat the 403). Use as the route's `transform`.
 */
const NUMERIC_PATH_IDS = new Set(['property_id', 'lead_id', 'endpoint_id'])
export function pathIdsToNumbers({ params }: { params: Record<string, unknown> }) {
  for (const [name, v] of Object.entries(params)) {
    if (NUMERIC_PATH_IDS.has(name) && typeof v === 'string') params[name] = PATH_ID_RE.test(v) ? Number(v) : NaN
  }
}

/** A path id: an integer from 1 to MAX_ID (contract §6: anything else is a 422). */
export const idParam = (name: string) =>
  t.Object({
    [name]: t.Integer({
      minimum: 1,
      maximum: MAX_ID,
      description: 'Numeric id, 1–2147483647, in plain decimal digits (no sign, leading zero, spaces or exponent).',
    }),
  })

export const CreatedResponse = T.Object(
  { status: T.Literal('ok'), id: T.Integer({ minimum: 1 }) },
  { title: 'CreatedResponse', examples: [{ status: 'ok', id: 42 }] },
)

export const IdempotencyKeyHeader = t.Object({
  'idempotency-key': t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'Makes the request safe to retry for 24 hours (api-spec §8).' })),
})

export const Timestamp = T.String({ format: 'date-time', description: 'ISO 8601 with UTC offset.' })
export const Nullable = <S extends TSchema>(s: S) => T.Union([s, T.Null()])

/** A string enum as a union of literals (OpenAPI `anyOf` of `const`), typed as the literal union. */
export function literalUnion<const V extends readonly string[]>(values: V, options: Record<string, unknown> = {}): TSchema & { static: V[number] } {
  return T.Union(
    values.map((v) => T.Literal(v)),
    options,
  ) as never
}
