/**
 * api-spec §5.3: the scopes a key can hold. `GET /me` needs none. `webhooks:write` (contract
 * §10.2) manages webhook endpoints and redeliveries.
 */
export const SCOPES = ['properties:read', 'properties:write', 'leads:read', 'leads:write', 'leads:ingest', 'webhooks:write'] as const
export type Scope = (typeof SCOPES)[number]

export function parseScopes(raw: string): Scope[] {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const unknown = items.filter((s) => !(SCOPES as readonly string[]).includes(s))
  if (unknown.length) throw new Error(`unknown scope${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`)
  if (items.length === 0) throw new Error(`at least one scope is required (known: ${SCOPES.join(', ')})`)
  return [...new Set(items)] as Scope[]
}
