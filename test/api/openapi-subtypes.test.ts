/**
 * The subtype table (contract §3.1: keys with their Spanish labels, `Sin Especificar` when none)
 * in the OpenAPI document, where generators and the docs page show it, and in docs/properties.md.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { NO_SUBTYPE_LABEL, SUBTYPES, SUBTYPE_KEYS, subtypeTableMarkdown } from '../../shared/listings/subtypes'
import { call, createTestContext, type TestContext } from '../helpers/context'

let ctx: TestContext
let doc: any
beforeAll(async () => {
  ctx = await createTestContext()
  doc = (await call(ctx.app, 'GET', '/openapi.json')).body
})
afterAll(() => ctx.close())

const deref = (schema: any): any =>
  schema?.$ref
    ? deref(
        schema.$ref
          .slice(2)
          .split('/')
          .reduce((n: any, k: string) => n?.[k], doc),
      )
    : schema
const LABELS: Record<string, string> = Object.assign({}, ...Object.values(SUBTYPES))

/** `{type: {key: label}}` read back from a markdown table of `| \`type\` | \`key\` → Label, … |` rows. */
function tableIn(markdown: string, heading: RegExp): { table: Record<string, Record<string, string>>; section: string } {
  const start = markdown.search(heading)
  expect(start, `no section ${heading} in the file`).toBeGreaterThanOrEqual(0)
  const rest = markdown.slice(start)
  const next = rest.slice(1).search(/\n#{1,3} /)
  const section = next < 0 ? rest : rest.slice(0, next + 1)
  const table: Record<string, Record<string, string>> = {}
  for (const line of section.split('\n')) {
    const row = /^\| `([a-z_]+)` \| (.+) \|$/.exec(line.trim())
    if (!row) continue
    table[row[1]] = Object.fromEntries([...row[2].matchAll(/`([a-z_]+)` → ([^,]+?)(?=, `|$)/g)].map((m) => [m[1], m[2].trim()]))
  }
  return { table, section }
}

describe('subtype labels (contract §3.1)', () => {
  test('a key names one type’s subtype, so one label per key is the whole table', () => {
    const keys = Object.values(SUBTYPES).flatMap((t) => Object.keys(t))
    expect(new Set(keys).size).toBe(keys.length)
  })

  test('the create body’s subtype is the named PropertySubtypeKey enum, each key with its Spanish label', () => {
    const body = deref(doc.paths['/v1/properties'].post.requestBody.content['application/json'].schema)
    expect(body.properties.subtype).toEqual({ $ref: '#/components/schemas/PropertySubtypeKey' })
    const subtype = doc.components.schemas.PropertySubtypeKey
    expect([...subtype.enum].sort()).toEqual([...SUBTYPE_KEYS].sort())
    // openapi-generator, hey-api and openapi-typescript read the array; Scalar and Redocly the map.
    expect(subtype['x-enum-descriptions']).toEqual(subtype.enum.map((k: string) => LABELS[k]))
    expect(subtype['x-enumDescriptions']).toEqual(Object.fromEntries(subtype.enum.map((k: string) => [k, LABELS[k]])))
    expect(subtype['x-enum-descriptions']).toContain('Ático')
    expect(subtype['x-enum-descriptions']).toContain('Local comercial')
    expect(subtype.description).toContain(NO_SUBTYPE_LABEL)
    for (const [type, keys] of Object.entries(SUBTYPES)) {
      for (const [key, label] of Object.entries(keys)) expect(subtype.description, `${type}/${key}`).toContain(`\`${key}\` → ${label}`)
    }
  })

  test('PATCH takes the same enum or null; the response label names the table', () => {
    const patch = deref(doc.paths['/v1/properties/{property_id}'].patch.requestBody.content['application/json'].schema)
    expect(patch.properties.subtype).toEqual({ anyOf: [{ $ref: '#/components/schemas/PropertySubtypeKey' }, { type: 'null' }] })
    const property = doc.components.schemas.Property
    expect(property.properties.subtype.description).toContain(NO_SUBTYPE_LABEL)
  })

  test('docs/properties.md lists the same table', async () => {
    const { table, section } = tableIn(await Bun.file(`${import.meta.dir}/../../docs/properties.md`).text(), /\n## Subtype keys/)
    expect(table).toEqual(SUBTYPES)
    expect(section).toContain(subtypeTableMarkdown())
    expect(section).toContain(NO_SUBTYPE_LABEL)
  })
})
