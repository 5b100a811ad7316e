/**
 * Every error answer as application/problem+json (contract §6): one mapping from what was
 * thrown to status and body, by class and code (the error table in shared/platform/errors.ts),
 * never by message text.
 */
import { ValidationError } from 'elysia'
import { AppError, ERROR_CODES, type ErrorCode, type FieldError } from '../shared/platform/errors'
import { ReplayedRefusal } from '../shared/platform/idempotency'
import type { Logger } from '../shared/platform/logger'
import { isUnavailableError, unavailableCause } from '../shared/platform/unavailable'
import { describeIssue, fieldErrors, validationDetail } from '../shared/platform/validation'
import { validationFailure } from './elysia-adapter'

export function problemBody(code: ErrorCode, detail: string, requestId: string, extra: Record<string, unknown> = {}) {
  const { status, title } = ERROR_CODES[code]
  return { type: `urn:problem-type:${code.replace(/_/g, '-')}`, title, status, detail, code, request_id: requestId, ...extra }
}

/** `body` is the problem object, or its JSON text when that must be sent as it is (a replay). */
export function problemResponse(status: number, body: unknown, requestId: string, headers: Record<string, string> = {}): Response {
  return new Response(typeof body === 'string' ? body : JSON.stringify(body), {
    status,
    headers: {
      'content-type': 'application/problem+json',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-request-id': requestId,
      ...headers,
    },
  })
}

export type RawInputs = { path?: Record<string, unknown>; query?: Record<string, unknown> }

export interface Problem {
  status: number
  /** The problem object, or (a replayed refusal) the exact JSON text first sent. */
  body: unknown
  headers?: Record<string, string>
}

export function toProblem(
  error: unknown,
  code: string | number,
  request: { method: string; path: string },
  requestId: string,
  logger: Logger,
  raw: RawInputs = {},
): Problem {
  // Contract §15: a replay, refusals included, is the first answer byte for byte, marked as one.
  if (error instanceof ReplayedRefusal) return { status: error.responseStatus, body: error.text, headers: { 'idempotent-replayed': 'true' } }
  if (error instanceof AppError) {
    const extra: Record<string, unknown> = { ...error.extra }
    if (error.errors) extra.errors = error.errors
    return { status: error.status, body: problemBody(error.code, error.detail, requestId, extra) }
  }
  if (error instanceof ValidationError) {
    const errors = validationErrors(error, raw)
    return { status: 422, body: problemBody('validation', validationDetail(errors), requestId, { errors }) }
  }
  if (code === 'PARSE') {
    return {
      status: 422,
      body: problemBody('validation', 'Malformed JSON body', requestId, { errors: [{ loc: ['body'], msg: 'Malformed JSON body', type: 'json_invalid' }] }),
    }
  }
  if (code === 'NOT_FOUND') {
    return { status: 404, body: problemBody('not_found', `No route for ${request.method} ${request.path}`, requestId) }
  }
  if (isUnavailableError(error)) {
    logger.warn('dependency unavailable', { request_id: requestId, ...unavailableCause(error) })
    return {
      status: 503,
      body: problemBody('unavailable', 'A backing service is temporarily unavailable; retry shortly', requestId),
      headers: { 'retry-after': '2' },
    }
  }
  logger.error('unhandled error', { request_id: requestId, error })
  return { status: 500, body: problemBody('internal', 'Unexpected server error', requestId) }
}

function locateRawValue(value: unknown, raw: RawInputs): (string | number)[] | undefined {
  // Only scalars can have come from a path or query string; an object from a body may even
  // carry a `toString` that is not a function.
  if (value !== null && typeof value === 'object') return undefined
  for (const [where, values] of [
    ['path', raw.path],
    ['query', raw.query],
  ] as const) {
    for (const [name, v] of Object.entries(values ?? {}))
      if (v === value || String(v) === String(value) || (typeof value === 'number' && Number(v) === value)) return [where, name]
  }
  return undefined
}

const LOCATION: Record<string, string> = { body: 'body', query: 'query', params: 'path', headers: 'header', cookie: 'cookie' }

/** TypeBox errors → contract §6 `errors[]`, one per field, with readable messages. */
export function validationErrors(error: ValidationError, raw: RawInputs = {}): FieldError[] {
  const failure = validationFailure(error)
  // Elysia's string→number step of path and query numbers reports a violation as target
  // "property" without the parameter's name; the raw value tells which parameter it was.
  if (failure.target === 'property') {
    const loc = locateRawValue(failure.value, raw)
    if (loc)
      return [
        {
          loc,
          msg: failure.issues[0]?.message ?? describeIssue({ kind: 'invalid', message: error.message, schema: failure.schema, value: failure.value, path: '' }),
          type: 'invalid',
        },
      ]
  }
  return fieldErrors(LOCATION[failure.target] ?? failure.target, failure.issues)
}
