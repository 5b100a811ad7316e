/**
 * Schema violations as contract §6 `errors[]`: one entry per field with a readable message.
 * The HTTP tier maps Elysia's validation errors through here (api/problems.ts), and operations
 * that validate a value themselves (the merged record of a PATCH, contract §3.2) throw
 * `schemaViolation`, so both read the same.
 */
import type { Static, TSchema } from '@sinclair/typebox'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { Value } from '@sinclair/typebox/value'
import { AppError, type FieldError } from './errors'

export type IssueKind = 'unknown_field' | 'missing' | 'invalid'

export interface ValidationIssue {
  /** JSON pointer inside the validated value (`/pricing/sale`), '' for the value itself. */
  path: string
  kind: IssueKind
  message: string
  schema: Record<string, unknown>
  value: unknown
}

export const issueKind = (type: ValueErrorType): IssueKind =>
  type === ValueErrorType.ObjectAdditionalProperties ? 'unknown_field' : type === ValueErrorType.ObjectRequiredProperty ? 'missing' : 'invalid'

/** One line for a 422's `detail`: the field's message, or the list of fields. */
export const validationDetail = (errors: FieldError[]) =>
  errors.length === 1 ? `${errors[0].loc.join('.')}: ${errors[0].msg}` : `${errors.length} invalid fields: ${errors.map((e) => e.loc.join('.')).join(', ')}`

/** Issues under `where` (`body`, `query`, `path`…), the first per field. */
export function fieldErrors(where: string, issues: ValidationIssue[]): FieldError[] {
  const seen = new Set<string>()
  const out: FieldError[] = []
  for (const issue of issues) {
    const loc: (string | number)[] = [
      where,
      ...issue.path
        .split('/')
        .filter(Boolean)
        .map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~'))),
    ]
    const key = loc.join('\u0000')
    if (seen.has(key)) continue
    seen.add(key)
    out.push({ loc, msg: describeIssue(issue), type: issue.kind === 'unknown_field' ? 'extra_forbidden' : issue.value === undefined ? 'missing' : 'invalid' })
  }
  if (out.length === 0) out.push({ loc: [where], msg: 'Invalid value', type: 'invalid' })
  return out
}

export function describeIssue(issue: ValidationIssue): string {
  if (issue.kind === 'unknown_field') return 'Unknown field'
  if (issue.kind === 'missing' && issue.value === undefined) return 'Field required'
  const branches = issue.schema.anyOf as Record<string, unknown>[] | undefined
  if (branches) {
    const consts = branches.filter((b) => 'const' in b).map((b) => JSON.stringify(b.const))
    if (consts.length === branches.length) return `Expected one of ${consts.join(', ')}`
    const types = [...new Set(branches.map((b) => (b.format === 'integer' ? 'integer' : (b.type as string))).filter(Boolean))]
    if (types.length) return `Expected ${types.join(' or ')}`
  }
  if (issue.schema.enum) return `Expected one of ${(issue.schema.enum as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
  return issue.message
}

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v)
const accepts = (branch: TSchema, type: string) => (type === 'number' ? branch.type === 'number' || branch.type === 'integer' : branch.type === type)

/**
 * TypeBox reports a value that fails `X | null` as one error on the union, so a too-long
 * `characteristics.floor` inside a nullable `characteristics` would be reported on
 * `characteristics`. Where exactly one branch of a union has the value's JSON type, that branch's
 * errors say what is wrong, at the innermost field (contract §6).
 */
export function* innermostErrors(errors: Iterable<ValueError>): Generator<ValueError> {
  for (const e of errors) {
    const branches = (e.schema.anyOf ?? []) as TSchema[]
    if (e.type === ValueErrorType.Union && Array.isArray(e.errors) && branches.length === e.errors.length) {
      const type = jsonType(e.value)
      const matching = branches.flatMap((b, i) => (accepts(b, type) && b.const === undefined ? [i] : []))
      if (matching.length === 1) {
        yield* innermostErrors(e.errors[matching[0]])
        continue
      }
    }
    yield e
  }
}

export const issueOf = (e: ValueError): ValidationIssue => ({
  path: e.path,
  kind: issueKind(e.type),
  message: e.message,
  schema: e.schema as Record<string, unknown>,
  value: e.value,
})

/** The 422 for a value that fails `schema`, located under `where`. */
export function schemaViolation(where: string, schema: TSchema, value: unknown): AppError {
  const errors = fieldErrors(where, [...innermostErrors(Value.Errors(schema, value))].map(issueOf))
  return new AppError('validation', validationDetail(errors), { errors })
}

/** Checks `value` against `schema`, or throws its 422 (under `where`). */
export function assertSchema<S extends TSchema>(where: string, schema: S, value: unknown): asserts value is Static<S> {
  if (!Value.Check(schema, value)) throw schemaViolation(where, schema, value)
}
