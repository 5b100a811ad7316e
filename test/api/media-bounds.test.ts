/**
 * Bounds of the media requests (contract §9, §15; docs/limits.md "Media"): every string and array
 * of their request schemas in the served /openapi.json has one, and each holds — one past it is a
 * 422 naming the field, the bound itself is accepted.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, createTestContext, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { loadDocument, operationsOf, resolve, type Json } from '../fuzz/openapi-schema'
import { createProperty } from '../helpers/properties'

const MEDIA_OPS = ['importImages', 'updateImage', 'reorderImages', 'createVideoLink', 'createVideoUpload', 'updateVideo', 'reorderVideos', 'listLeadInquiries']

let ctx: TestContext
let biz: SeededBusiness
let doc: Json
let propertyId: number
beforeAll(async () => {
  ctx = await createTestContext()
  biz = await seedBusiness(ctx)
  doc = await loadDocument(ctx.app)
  propertyId = await createProperty(ctx, biz.apiKey)
})
afterAll(() => ctx.close())

/** Every string without maxLength and array without maxItems under a schema, by path. */
function unbounded(schema: Json, path: string[] = []): string[] {
  const s = resolve(doc, schema) as Json
  if (!s || typeof s !== 'object') return []
  const out: string[] = []
  for (const branch of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) out.push(...unbounded(branch, path))
  if (s.type === 'string' && s.maxLength === undefined && !s.enum && s.const === undefined) out.push(path.join('.'))
  if (s.type === 'array') {
    if (s.maxItems === undefined) out.push(path.join('.'))
    out.push(...unbounded(s.items, [...path, '[]']))
  }
  for (const [k, v] of Object.entries<Json>(s.properties ?? {})) out.push(...unbounded(v, [...path, k]))
  return out
}

describe('media request bounds', () => {
  test('every string and array of the media request bodies and queries has a bound in /openapi.json', () => {
    const ops = operationsOf(doc).filter((o) => MEDIA_OPS.includes(o.operationId))
    expect(ops.map((o) => o.operationId).sort()).toEqual([...MEDIA_OPS].sort())
    const missing = ops.flatMap((o) => [
      ...(o.body ? unbounded(o.body.schema).map((p) => `${o.operationId} body ${p}`) : []),
      ...o.params.filter((p) => p.in === 'query').flatMap((p) => unbounded(p.schema, [p.name]).map((x) => `${o.operationId} query ${x}`)),
    ])
    expect(missing).toEqual([])
  })

  const uuid = () => crypto.randomUUID()
  const cases: [string, string, string, (n: number) => unknown, number, (string | number)[]][] = [
    [
      'importImages',
      'POST',
      'images/imports',
      (n) => ({ images: Array.from({ length: n }, (_, i) => ({ url: `https://example.com/${i}.jpg` })) }),
      50,
      ['body', 'images'],
    ],
    [
      'importImages',
      'POST',
      'images/imports',
      (n) => ({ images: [{ url: `https://example.com/${'a'.repeat(n - 24)}.jpg` }] }),
      2000,
      ['body', 'images', 0, 'url'],
    ],
    [
      'importImages',
      'POST',
      'images/imports',
      (n) => ({ images: [{ url: 'https://example.com/a.jpg', title: 'x'.repeat(n) }] }),
      200,
      ['body', 'images', 0, 'title'],
    ],
    ['createVideoLink', 'POST', 'videos', (n) => ({ url: `https://vimeo.com/76979871?x=${'a'.repeat(n - 29)}`, title: 't' }), 2000, ['body', 'url']],
    ['createVideoLink', 'POST', 'videos', (n) => ({ url: 'https://vimeo.com/76979871', title: 'x'.repeat(n) }), 200, ['body', 'title']],
    ['createVideoUpload', 'POST', 'videos/uploads', (n) => ({ filename: 'f'.repeat(n), content_type: 'video/mp4', size: 10 }), 255, ['body', 'filename']],
    ['createVideoUpload', 'POST', 'videos/uploads', (n) => ({ filename: 'a.mp4', content_type: 'video/mp4', size: n }), 2_147_483_648, ['body', 'size']],
    [
      'createVideoUpload',
      'POST',
      'videos/uploads',
      (n) => ({ filename: 'a.mp4', content_type: 'video/webm', size: 10, title: 'x'.repeat(n) }),
      200,
      ['body', 'title'],
    ],
    ['reorderImages', 'PUT', 'images/order', (n) => ({ image_ids: Array.from({ length: n }, uuid) }), 1000, ['body', 'image_ids']],
    ['reorderVideos', 'PUT', 'videos/order', (n) => ({ video_ids: Array.from({ length: n }, uuid) }), 1000, ['body', 'video_ids']],
  ]
  test.each(cases)('%s %s %s: one past the bound is a 422 naming the field; the bound itself is not', async (_op, method, path, body, bound, loc) => {
    // A listing of its own: what another case created must not change this one's answers.
    const own = await createProperty(ctx, biz.apiKey)
    const send = (n: number) => call(ctx.app, method, `/v1/properties/${own}/${path}`, { key: biz.apiKey, body: body(n) })
    const past = await send(bound + 1)
    expect(past.status, past.text).toBe(422)
    expect(past.body.errors.map((e: any) => e.loc)).toContainEqual(loc)
    const at = await send(bound)
    // At the bound the schema accepts it: any refusal is a rule's (an unknown id is not in the order), never this field's.
    if (at.status === 422) expect(at.body.errors.map((e: any) => JSON.stringify(e.loc))).not.toContain(JSON.stringify(loc))
  })

  test('PATCH titles: 200 characters are taken, 201 are a 422 on `title`', async () => {
    const link = await call(ctx.app, 'POST', `/v1/properties/${propertyId}/videos`, { key: biz.apiKey, body: { url: 'https://youtu.be/dQw4w9WgXcQ' } })
    const path = `/v1/properties/${propertyId}/videos/${link.body.id}`
    expect((await call(ctx.app, 'PATCH', path, { key: biz.apiKey, body: { title: 'x'.repeat(200) } })).status).toBe(200)
    const past = await call(ctx.app, 'PATCH', path, { key: biz.apiKey, body: { title: 'x'.repeat(201) } })
    expect(past.status).toBe(422)
    expect(past.body.errors[0].loc).toEqual(['body', 'title'])
  })
})
