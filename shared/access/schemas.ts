/**
 * What the operator CLI prints for businesses and keys (contract §1). Secrets appear only in
 * `CreatedApiKey`, the one answer that shows a key whole.
 */
import { Type as T, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, literalUnion } from '../platform/schemas'
import { SCOPES } from './scopes'

const ScopeList = T.Array(literalUnion(SCOPES))

export const Business = T.Object({ id: T.Integer(), name: T.String() }, { title: 'Business' })
export type Business = Static<typeof Business>

export const CreatedApiKey = T.Object(
  {
    business_id: T.Integer(),
    key_id: T.String(),
    api_key: T.String({ description: '`AC_LIVE_<key_id>.<secret>`: shown here once, stored only as a hash.' }),
    scopes: ScopeList,
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
    created_at: Timestamp,
    expires_at: Nullable(Timestamp),
    revoked_at: Nullable(Timestamp),
    last_used_at: Nullable(Timestamp),
  },
  { title: 'ApiKeySummary' },
)
export type ApiKeySummary = Static<typeof ApiKeySummary>
