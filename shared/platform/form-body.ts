/**
 * `application/x-www-form-urlencoded` bodies (contract §16.3): a plain HTML form's fields, named
 * by the JSON body's paths joined with dots (`contact.name`), made into the JSON body the route's
 * own TypeBox schema then validates. Nothing here validates: the schema only says how to read
 * each value (a number, a boolean, an array), so the one schema decides what is valid, and its
 * errors name the field as the form spelled it (`formLoc`).
 */
import type { TSchema } from '@sinclair/typebox'
import { AppError, type FieldError } from './errors'

export type FormPair = [name: string, value: string]

/** Deeper names than any body of the API has; a longer one is refused before any object is built. */
const MAX_NAME_SEGMENTS = 32

const invalid = (loc: (string | number)[], msg: string, type: string) => new AppError('validation', msg, { errors: [{ loc, msg, type }] })

/**
 * The pairs of a form body in order. Strict: a `%` escape that is not UTF-8 (a page in another
 * charset, or a mangled body) is a 422 rather than a field quietly holding U+FFFD.
 */
export function parseFormPairs(text: string): FormPair[] {
  const pairs: FormPair[] = []
  if (text === '') return pairs
  for (const part of text.split('&')) {
    if (part === '') continue
    const eq = part.indexOf('=')
    const rawName = eq === -1 ? part : part.slice(0, eq)
    const rawValue = eq === -1 ? '' : part.slice(eq + 1)
    try {
      pairs.push([decodeURIComponent(rawName.replaceAll('+', ' ')), decodeURIComponent(rawValue.replaceAll('+', ' '))])
    } catch {
      throw invalid(['body'], 'Form body is not valid application/x-www-form-urlencoded UTF-8', 'form_invalid')
    }
  }
  return pairs
}

interface Slot {
  schema: TSchema | undefined
  /** Listed in its object's `required`. */
  required: boolean
}

/** The schema under a nullable union (`anyOf: [X, null]`), so its type tells how to read a value. */
function unwrap(schema: TSchema | undefined): TSchema | undefined {
  if (!schema?.anyOf) return schema
  const branches = (schema.anyOf as TSchema[]).filter((s) => s.type !== 'null')
  return branches.length === 1 ? unwrap(branches[0]) : schema
}

function child(parent: TSchema | undefined, name: string): Slot {
  const schema = unwrap(parent)
  if (schema?.type !== 'object') return { schema: undefined, required: false }
  if (schema.properties && Object.hasOwn(schema.properties, name)) {
    return { schema: schema.properties[name] as TSchema, required: Array.isArray(schema.required) && schema.required.includes(name) }
  }
  // A record (`search.location.name`): any key, its values as the record says.
  const pattern = schema.patternProperties ? (Object.values(schema.patternProperties)[0] as TSchema) : undefined
  const additional = typeof schema.additionalProperties === 'object' ? (schema.additionalProperties as TSchema) : undefined
  return { schema: pattern ?? additional, required: false }
}

const TRUE = new Set(['true', 'on', '1'])
const FALSE = new Set(['false', 'off', '0'])
const NUMBER_RE = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

/** A form value read as its schema's type; a value that does not read as one is left for the schema to refuse. */
function convert(value: string, schema: TSchema | undefined): unknown {
  const type = unwrap(schema)?.type
  if ((type === 'integer' || type === 'number') && NUMBER_RE.test(value.trim())) return Number(value.trim())
  if (type === 'boolean') {
    const v = value.trim().toLowerCase()
    if (TRUE.has(v)) return true
    if (FALSE.has(v)) return false
  }
  return value
}

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  // defineProperty, not assignment: a field named `__proto__` becomes an own key the schema refuses, never the prototype.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

/**
 * The JSON body for `schema` from the form's fields (reserved fields already taken out). A
 * repeated name is an array; a field whose schema is an array is one even when sent once (a
 * single ticked checkbox). Numbers and booleans are converted where the schema has them
 * (`on`, `true`, `1` / `off`, `false`, `0`). An empty value of an optional field is left out, as
 * browsers send every text input, filled in or not; a required one stays for the schema to judge.
 */
export function formToBody(pairs: FormPair[], schema: TSchema): Record<string, unknown> {
  const grouped = new Map<string, string[]>()
  for (const [name, value] of pairs) {
    const values = grouped.get(name)
    if (values) values.push(value)
    else grouped.set(name, [value])
  }
  const body: Record<string, unknown> = {}
  for (const [name, values] of grouped) {
    const segments = name.split('.')
    if (segments.length > MAX_NAME_SEGMENTS || segments.some((s) => s === '')) {
      throw invalid(
        ['body', name],
        `Field name must be the body's path joined by dots, e.g. contact.name (at most ${MAX_NAME_SEGMENTS} parts, none empty)`,
        'form_name',
      )
    }
    let target = body
    let slot: Slot = { schema, required: true }
    for (let i = 0; i < segments.length - 1; i++) {
      slot = child(slot.schema, segments[i])
      const existing = Object.hasOwn(target, segments[i]) ? target[segments[i]] : undefined
      if (existing === undefined) {
        const next: Record<string, unknown> = {}
        setOwn(target, segments[i], next)
        target = next
      } else if (existing !== null && typeof existing === 'object' && !Array.isArray(existing)) target = existing as Record<string, unknown>
      else throw invalid(['body', name], `Field ${segments.slice(0, i + 1).join('.')} is sent both as a value and as an object`, 'form_conflict')
    }
    const last = segments[segments.length - 1]
    slot = child(slot.schema, last)
    if (Object.hasOwn(target, last)) throw invalid(['body', name], `Field ${name} is sent both as a value and as an object`, 'form_conflict')
    const leaf = unwrap(slot.schema)
    let value: unknown
    if (leaf?.type === 'array') {
      const items = values.filter((v) => v !== '').map((v) => convert(v, leaf.items as TSchema | undefined))
      if (items.length === 0 && !slot.required) continue
      value = items
    } else {
      if (!slot.required && values.length === 1 && values[0] === '') continue
      value = values.length === 1 ? convert(values[0], slot.schema) : values.map((v) => convert(v, slot.schema))
    }
    setOwn(target, last, value)
  }
  return body
}

/** `["body","contact","phone"]` → `["body","contact.phone"]`: a form's errors name its fields (array indexes stay apart). */
export function formLoc(loc: (string | number)[]): (string | number)[] {
  if (loc[0] !== 'body' || loc.length < 2) return loc
  const names: string[] = []
  let i = 1
  while (i < loc.length && typeof loc[i] === 'string') names.push(loc[i++] as string)
  return names.length ? ['body', names.join('.'), ...loc.slice(i)] : loc
}

export const formErrors = (errors: FieldError[]): FieldError[] => errors.map((e) => ({ ...e, loc: formLoc(e.loc) }))
