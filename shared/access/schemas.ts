/**
 * What the operator CLI prints for businesses and keys (contract §1). Secrets appear only in
 * `CreatedApiKey`, the one answer that shows a key whole.
 */
import { Type as T, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, literalUnion } from '../platform/schemas'
import { SCOPES } from './scopes'

const ScopeList = T.Array(literalUnion(SCOPES))

export const KEY_KINDS = ['secret', 'publishable'] as const
export const KeyKind = literalUnion(KEY_KINDS, {
  title: 'KeyKind',
  description:
    '`secret` (server side only) or `publishable` (`AC_PUB_…`: safe to show in a web page, scope exactly `leads:ingest`, usable from its origins only).',
})
const Origins = T.Array(T.String(), { description: 'Publishable keys: the origins (`https://host[:port]`) a browser may use the key from.' })
const RateText = T.String({ description: '`N/s`, `N/min` or `N/h`.' })

export const Business = T.Object({ id: T.Integer(), name: T.String() }, { title: 'Business' })
export type Business = Static<typeof Business>

export const CreatedApiKey = T.Object(
  {
    business_id: T.Integer(),
    key_id: T.String(),
    api_key: T.String({
      description: '`AC_LIVE_<key_id>.<secret>` (secret) or `AC_PUB_<key_id>.<secret>` (publishable): shown here once, stored only as a hash.',
    }),
    kind: KeyKind,
    scopes: ScopeList,
    origins: T.Optional(Origins),
    rate_per_ip: T.Optional(RateText),
    rate: T.Optional(RateText),
    expires_at: Nullable(Timestamp),
  },
  { title: 'CreatedApiKey' },
)
export type CreatedApiKey = Static<typeof CreatedApiKey>

export const ApiKeySummary = T.Object(
  {
    key_id: T.String(),
    name: Nullable(T.String()),
    scopes: ScopeList,
    kind: KeyKind,
    origins: Nullable(Origins),
    rate_per_ip: Nullable(RateText),
    rate: Nullable(RateText),
    created_at: Timestamp,
    expires_at: Nullable(Timestamp),
    revoked_at: Nullable(Timestamp),
    last_used_at: Nullable(Timestamp),
  },
  { title: 'ApiKeySummary' },
)
export type ApiKeySummary = Static<typeof ApiKeySummary>
