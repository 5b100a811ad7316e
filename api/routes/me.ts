import { Elysia } from 'elysia'
import { Type as T } from '@sinclair/typebox'
import { authPlugin } from '../plugins/auth'
import { Nullable, Timestamp, literalUnion } from '../../shared/platform/schemas'
import { SCOPES } from '../../shared/access/scopes'
import { KeyKind } from '../../shared/access/schemas'

const MeResponse = T.Object(
  {
    status: T.Literal('ok'),
    data: T.Object({
      business: T.Object({ id: T.Integer(), name: T.String() }),
      api_key: T.Object({
        key_id: T.String(),
        name: Nullable(T.String()),
        scopes: T.Array(literalUnion(SCOPES)),
        kind: KeyKind,
        origins: T.Optional(
          T.Array(T.String(), { description: 'Publishable keys only: the origins (`https://host[:port]`) a browser may use the key from (contract §16.1).' }),
        ),
        created_at: Timestamp,
        expires_at: Nullable(Timestamp),
      }),
    }),
    authenticated_as: T.String(),
  },
  {
    title: 'ApiKeyContextResponse',
    examples: [
      {
        status: 'ok',
        data: {
          business: { id: 1, name: 'Inmobiliaria Sol' },
          api_key: {
            key_id: 'k3Yx9QmZpL2aB7cD',
            name: 'web',
            scopes: ['leads:ingest'],
            kind: 'secret',
            created_at: '2026-11-01T10:00:00.000Z',
            expires_at: null,
          },
        },
        authenticated_as: 'Inmobiliaria Sol',
      },
    ],
  },
)

/** contract §2, §16.1: the business and key behind the request; a publishable key shows its origins. */
export const meRoutes = new Elysia({ name: 'routes.me', prefix: '/v1' }).use(authPlugin).get(
  '/me',
  ({ auth }) => ({
    status: 'ok' as const,
    data: {
      business: auth.business,
      api_key: {
        key_id: auth.keyId,
        name: auth.keyName,
        scopes: auth.scopes,
        kind: auth.kind,
        ...(auth.browser ? { origins: [...auth.browser.origins] } : {}),
        created_at: auth.createdAt.toISOString(),
        expires_at: auth.expiresAt?.toISOString() ?? null,
      },
    },
    authenticated_as: auth.business.name,
  }),
  {
    operation: 'getApiKeyContext',
    response: { 200: MeResponse },
    detail: {
      tags: ['Key'],
      summary: 'The authenticated business and the key’s scopes',
      description: 'Any active key may call it, whatever its scopes. `kind` tells a secret key from a publishable one, which also shows its `origins`.',
    },
  },
)
