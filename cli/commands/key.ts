import { createApiKey, listApiKeys, revokeApiKey } from '../../shared/access/accounts'
import { parseScopes } from '../../shared/access/scopes'
import { CliError, intFlag, stringFlag, type CliContext, type Flags } from '../io'

export const usage = `  key create --business <id> --scopes <s1,s2,...> [--name <name>] [--expires-at <ISO 8601>] [--json]
  key revoke <key_id> [--json]
  key list --business <id> [--json]          (never prints secrets)`

export async function run(f: Flags, ctx: CliContext): Promise<void> {
  const [command, arg] = f.positional
  switch (command) {
    case 'create': {
      const businessId = intFlag(f, 'business', true)
      let scopes
      try {
        scopes = parseScopes(stringFlag(f, 'scopes', true))
      } catch (error) {
        throw new CliError((error as Error).message)
      }
      const expiresRaw = stringFlag(f, 'expires-at')
      let expiresAt: Date | null = null
      if (expiresRaw !== undefined) {
        expiresAt = new Date(expiresRaw)
        if (Number.isNaN(expiresAt.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(expiresRaw)) throw new CliError(`--expires-at must be an ISO 8601 timestamp, got "${expiresRaw}"`)
      }
      const key = await createApiKey(ctx, { businessId, scopes, name: stringFlag(f, 'name') ?? null, expiresAt })
      ctx.out(key, `created key ${key.key_id} for business ${businessId}\n\n  ${key.api_key}\n\nThis is the only time the secret is shown; store it now.`)
      return
    }
    case 'revoke': {
      if (!arg) throw new CliError(`key revoke needs a key_id\n${usage}`)
      await revokeApiKey(ctx, arg)
      ctx.out({ key_id: arg, revoked: true }, `revoked key ${arg} (refused by every API replica within 1 s)`)
      return
    }
    case 'list': {
      const businessId = intFlag(f, 'business', true)
      const keys = await listApiKeys(ctx, businessId)
      ctx.out({ business_id: businessId, keys }, keys.map((k) => `${k.key_id}  ${k.name ?? '-'}  ${k.scopes.join(',')}  ${k.revoked_at ? 'revoked' : k.expires_at && new Date(k.expires_at) < new Date() ? 'expired' : 'active'}`).join('\n') || 'no keys')
      return
    }
    default:
      throw new CliError(`unknown command "key ${command ?? ''}"\n${usage}`)
  }
}
