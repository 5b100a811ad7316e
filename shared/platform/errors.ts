/**
 * One error model (conventions §4): a closed set of codes, each with its HTTP status and
 * problem title in one table. Code is classified by `code`, never by message text.
 */
export const ERROR_CODES = {
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  /** contract §16.2: a publishable key used from a page whose origin it does not list. */
  origin_not_allowed: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not Found' },
  conflict: { status: 409, title: 'Conflict' },
  duplicate_contact: { status: 409, title: 'Conflict' },
  idempotency_conflict: { status: 409, title: 'Conflict' },
  payload_too_large: { status: 413, title: 'Payload Too Large' },
  validation: { status: 422, title: 'Unprocessable Content' },
  /** contract §16.4: a publishable key's per-address or per-key limit. */
  rate_limited: { status: 429, title: 'Too Many Requests' },
  invalid_budget: { status: 500, title: 'Internal Server Error' },
  internal: { status: 500, title: 'Internal Server Error' },
  unavailable: { status: 503, title: 'Service Unavailable' },
} as const

export type ErrorCode = keyof typeof ERROR_CODES

export interface FieldError {
  loc: (string | number)[]
  msg: string
  type: string
}

export class AppError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly detail: string
  readonly errors?: FieldError[]
  readonly extra?: Record<string, unknown>

  constructor(code: ErrorCode, detail: string, options: { errors?: FieldError[]; extra?: Record<string, unknown>; cause?: unknown } = {}) {
    super(detail, { cause: options.cause })
    this.name = 'AppError'
    this.code = code
    this.status = ERROR_CODES[code].status
    this.detail = detail
    this.errors = options.errors
    this.extra = options.extra
  }
}

/** A 422 about one field; `loc` follows contract §6 (`["body","pricing","sale"]`). */
export function fieldError(loc: (string | number)[], msg: string, type = 'value_error'): AppError {
  return new AppError('validation', msg, { errors: [{ loc, msg, type }] })
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`)

/**
 * A backing service could not answer (refused, closed, timed out): the request may succeed
 * later, so it is a 503 with Retry-After. Raised where a call to the service is made (the queue
 * producer wraps every client-side Redis failure in it), so no caller reads error messages.
 */
export class ServiceUnavailableError extends Error {
  readonly code = 'SERVICE_UNAVAILABLE'
  constructor(
    readonly service: 'PostgreSQL' | 'Redis',
    cause: unknown,
  ) {
    super(`${service} is unavailable`, { cause })
    this.name = 'ServiceUnavailableError'
  }
}
