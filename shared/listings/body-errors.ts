/**
 * Schema violations of a property body located at the innermost field (contract §6). TypeBox
 * reports a value that fails `X | null` as one error on the union, so a too-long
 * `characteristics.floor` inside the nullable `characteristics` of a PATCH would be reported on
 * `characteristics`. Where exactly one branch of a union has the value's JSON type, the errors
 * of that branch are the ones that say what is wrong.
 */
import type { Static, TSchema } from '@sinclair/typebox'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { Value } from '@sinclair/typebox/value'
import { AppError } from '../platform/errors'
import { fieldErrors, issueKind, validationDetail } from '../platform/validation'

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v)
const accepts = (branch: TSchema, type: string) => {
  const t = branch.type
  if (type === 'number') return t === 'number' || t === 'integer'
  return t === type
}

function* innermost(errors: Iterable<ValueError>): Generator<ValueError> {
  for (const e of errors) {
    const branches = (e.schema.anyOf ?? []) as TSchema[]
    if (e.type === ValueErrorType.Union && branches.length === e.errors.length) {
      const type = jsonType(e.value)
      const matching = branches.flatMap((b, i) => (accepts(b, type) && b.const === undefined ? [i] : []))
      if (matching.length === 1) {
        yield* innermost(e.errors[matching[0]])
        continue
      }
    }
    yield e
  }
}

/** Throws the 422 for a body that fails `schema`, each error at its innermost field. */
export function assertBody<S extends TSchema>(schema: S, body: unknown): asserts body is Static<S> {
  if (Value.Check(schema, body)) return
  const issues = [...innermost(Value.Errors(schema, body))].map((e) => ({
    path: e.path,
    kind: issueKind(e.type),
    message: e.message,
    schema: e.schema as Record<string, unknown>,
    value: e.value,
  }))
  const errors = fieldErrors('body', issues)
  throw new AppError('validation', validationDetail(errors), { errors })
}
