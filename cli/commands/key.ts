import { parseScopes, SCOPES } from '../../shared/access/scopes'
import { businessFlag as business, command, UsageError, type Group } from '../spec'

const accounts = () => import('../../shared/access/accounts')

export const key: Group = {
  name: 'key',
  summary: 'API keys of a business (contract §1)',
  commands: {
    create: command({
      summary: 'create an API key; prints its secret once',
      description: 'The secret is shown only now and stored only as its SHA-256; store it at once.',
      options: {
        business,
        scopes: {
          value: '<s1,s2,...>', required: true, help: `comma-separated, from: ${SCOPES.join(', ')}`,
          parse: (raw) => {
            try {
              return parseScopes(raw)
            } catch (error) {
              throw new UsageError((error as Error).message)
            }
          },
        },
        name: { value: '<name>', help: 'a label for the key (shown by key list)' },
        'expires-at': {
          value: '<ISO 8601>', help: 'refused from then on, e.g. 2027-01-01T00:00:00Z (default: never)',
          parse: (raw, flag) => {
            const at = new Date(raw)
            if (Number.isNaN(at.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(raw)) throw new UsageError(`${flag} must be an ISO 8601 timestamp, got "${raw}"`)
            return at
          },
        },
      },
      async run(args, ctx) {
        const created = await (await accounts()).createApiKey(ctx, { businessId: args.business, scopes: args.scopes, name: args.name ?? null, expiresAt: args['expires-at'] ?? null })
        ctx.out(created, `created key ${created.key_id} for business ${args.business}\n\n  ${created.api_key}\n\nThis is the only time the secret is shown; store it now.`)
      },
    }),
    revoke: command({
      summary: 'revoke a key; refused by every API replica within 1 s',
      options: {},
      operand: { name: 'key_id', help: 'the public key id (the part after AC_LIVE_, before the dot)' },
      async run(args, ctx) {
        await (await accounts()).revokeApiKey(ctx, args.operand)
        ctx.out({ key_id: args.operand, revoked: true }, `revoked key ${args.operand} (refused by every API replica within 1 s)`)
      },
    }),
    list: command({
      summary: "a business's keys: name, scopes, state (never their secrets)",
      options: { business },
      async run(args, ctx) {
        const keys = await (await accounts()).listApiKeys(ctx, args.business)
        const state = (k: (typeof keys)[number]) => (k.revoked_at ? 'revoked' : k.expires_at && new Date(k.expires_at) < new Date() ? 'expired' : 'active')
        ctx.out({ business_id: args.business, keys }, keys.map((k) => `${k.key_id}  ${k.name ?? '-'}  ${k.scopes.join(',')}  ${state(k)}`).join('\n') || 'no keys')
      },
    }),
  },
}
