import { insertKey, listKeys, revokeKey } from '../../db/queries/api-keys'
import { findBusiness } from '../../db/queries/businesses'
import { generateApiKey } from '../../shared/access/api-key-format'
import { parseScopes } from '../../shared/access/scopes'
import { CliError, intFlag, stringFlag, type CliContext, type Flags } from '../io'

export const usage = `  key create --business <id> --scopes <s1,s2,...> [--name <name>] [--expires-at <ISO 8601>] [--json]
  key revoke <key_id> [--json]
  key list --business <id> [--json]          (never prints secrets)`

export async function run(f: Flags, ctx: CliContext): Promise<void> {
  const [command, arg] = f.positional
  const db = ctx.database.db
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
      if (!(await findBusiness(db, businessId))) throw new CliError(`business ${businessId} does not exist`)
      const key = generateApiKey()
      const name = stringFlag(f, 'name') ?? null
      await insertKey(db, { businessId, keyId: key.keyId, secretHash: key.secretHash, name, scopes, expiresAt })
      ctx.out(
        { business_id: businessId, key_id: key.keyId, api_key: key.apiKey, scopes, expires_at: expiresAt?.toISOString() ?? null },
        `created key ${key.keyId} for business ${businessId}\n\n  ${key.apiKey}\n\nThis is the only time the secret is shown; store it now.`,
      )
      return
    }
    case 'revoke': {
      if (!arg) throw new CliError(`key revoke needs a key_id\n${usage}`)
      const found = await revokeKey(db, arg)
      if (!found) throw new CliError(`key ${arg} does not exist`)
      ctx.out({ key_id: arg, revoked: true }, `revoked key ${arg} (refused by every API replica within 1 s)`)
      return
    }
    case 'list': {
      const businessId = intFlag(f, 'business', true)
      const keys = (await listKeys(db, businessId)).map((k) => ({
        key_id: k.keyId, name: k.name, scopes: k.scopes,
        created_at: k.createdAt.toISOString(), expires_at: k.expiresAt?.toISOString() ?? null,
        revoked_at: k.revokedAt?.toISOString() ?? null, last_used_at: k.lastUsedAt?.toISOString() ?? null,
      }))
      ctx.out({ business_id: businessId, keys }, keys.map((k) => `${k.key_id}  ${k.name ?? '-'}  ${k.scopes.join(',')}  ${k.revoked_at ? 'revoked' : k.expires_at && new Date(k.expires_at) < new Date() ? 'expired' : 'active'}`).join('\n') || 'no keys')
      return
    }
    default:
      throw new CliError(`unknown command "key ${command ?? ''}"\n${usage}`)
  }
}
