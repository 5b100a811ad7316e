/**
 * `GET /feeds/{token}/kyero.xml` (contract §12): the portal feed, without an API key (the token
 * is the credential; a revoked or unknown one is a 404). Streamed; `ETag` and `Last-Modified`
 * from the business's catalogue version, and 304 for a conditional request without reading a
 * listing. The one cacheable answer of the service (`Cache-Control: public, max-age=300`).
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import { notModified, openFeed, streamKyeroFeed } from '../../shared/feeds/operations'

const CACHEABLE = 'public, max-age=300'

const FEED_HEADERS = {
  ETag: { description: 'The catalogue version of the business: send it back in `If-None-Match`.', schema: { type: 'string' } },
  'Last-Modified': { description: 'The time of the last change of the catalogue: send it back in `If-Modified-Since`.', schema: { type: 'string' } },
  'Cache-Control': { description: '`public, max-age=300`.', schema: { type: 'string', const: CACHEABLE } },
}

export const feedRoutes = (deps: AppDeps) =>
  new Elysia({ name: 'routes.feeds' }).get(
    '/feeds/:token/kyero.xml',
    async ({ params, request, set }) => {
      const feed = await openFeed(deps, params.token, 'kyero')
      const { etag, lastModified } = feed.validators
      set.headers['cache-control'] = CACHEABLE
      set.headers.etag = etag
      set.headers['last-modified'] = lastModified.toUTCString()
      if (notModified(feed.validators, request.headers.get('if-none-match'), request.headers.get('if-modified-since'))) {
        set.status = 304
        return new Response(null, { status: 304 })
      }
      set.headers['content-type'] = 'application/xml; charset=utf-8'
      return new Response(streamKyeroFeed(deps, feed), { status: 200 })
    },
    {
      params: t.Object({ token: t.String({ maxLength: 100, description: 'The feed token printed by `cli feed create`.' }) }),
      detail: {
        operationId: 'getKyeroFeed',
        tags: ['Feeds'],
        summary: 'Portal feed in Kyero v3 XML',
        description:
          'Every published listing of the business, with the public representation’s privacy rules, in Kyero’s v3 format (docs/feeds.md). ' +
          'No API key: the token in the path is the credential; an unknown or revoked ' +
          'token is a 404. Supports `If-None-Match` and `If-Modified-Since` (304). ' +
          'The one cacheable answer: `Cache-Control: public, max-age=300`.',
        security: [],
        responses: {
          200: { description: 'The feed.', headers: FEED_HEADERS, content: { 'application/xml': { schema: { type: 'string' } } } },
          304: { description: 'Not modified since the validators sent.', headers: FEED_HEADERS },
          404: { description: 'Unknown or revoked feed.', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } },
        },
      } as Record<string, unknown>,
    },
  )
