import { DEFAULT_RATE, DEFAULT_RATE_PER_IP, parseOrigins, parseRate, SettingError } from '../../shared/access/publishable'
import { parseScopes, SCOPES } from '../../shared/access/scopes'
import type { CreatedApiKey } from '../../shared/access/schemas'
import { businessFlag as business, checked, command, UsageError, type Group } from '../spec'

const accounts = () => import('../../shared/access/accounts')

/** A setting parser whose refusal is a usage error naming the flag. */
const usage =
  <T>(parse: (raw: string) => T) =>
  (raw: string, flag: string): T => {
    try {
      return parse(raw)
    } catch (error) {
      throw new UsageError(error instanceof SettingError ? `${flag}: ${error.message}` : (error as Error).message)
    }
  }

const origins = {
  value: '<o1,o2,...>',
  help: 'comma-separated origins a browser may use the key from: https://host[:port] (http:// only for localhost and 127.0.0.1), 1–20',
  parse: usage(parseOrigins),
} as const

export const key: Group = {
  name: 'key',
  summary: 'API keys of a business (contract §1, §16.1)',
  commands: {
    create: command({
      summary: 'create an API key; prints its secret once',
      description:
        'A secret key (--scopes) is for servers: the secret is shown only now and stored only as its SHA-256; store it at once. ' +
        'A publishable key (--publishable --origins) is meant to be shown in web pages: its scope is exactly leads:ingest, browsers may use it ' +
        `only from its origins, and it is rate-limited per client address (--rate-per-ip, ` +
        `default ${DEFAULT_RATE_PER_IP}) and in total (--rate, default ${DEFAULT_RATE}).`,
      options: {
        business,
        scopes: {
          value: '<s1,s2,...>',
          help: `comma-separated, from: ${SCOPES.join(', ')} (secret keys; required without --publishable)`,
          parse: usage(parseScopes),
        },
        publishable: { help: 'a publishable key (AC_PUB_…) for landing pages: scope leads:ingest, needs --origins' },
        origins,
        'rate-per-ip': {
          value: '<N/s|N/min|N/h>',
          help: `publishable keys: requests per client address (default ${DEFAULT_RATE_PER_IP})`,
          parse: usage(parseRate),
        },
        rate: { value: '<N/s|N/min|N/h>', help: `publishable keys: requests for the whole key (default ${DEFAULT_RATE})`, parse: usage(parseRate) },
        name: { value: '<name>', help: 'a label for the key (shown by key list)' },
        'expires-at': {
          value: '<ISO 8601>',
          help: 'refused from then on, e.g. 2027-01-01T00:00:00Z (default: never)',
          parse: (raw, flag) => {
            const at = new Date(raw)
            if (Number.isNaN(at.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(raw)) throw new UsageError(`${flag} must be an ISO 8601 timestamp, got "${raw}"`)
            return at
          },
        },
      },
      check(args) {
        if (args.publishable) {
          // contract §16.1: a publishable key's scope is fixed; one given by hand is a mistake to point out.
          if (args.scopes !== undefined) throw new UsageError('key create --publishable takes no --scopes: a publishable key has exactly leads:ingest')
          if (args.origins === undefined)
            throw new UsageError('key create --publishable needs --origins <o1,o2,...> (the sites that may use it, e.g. https://landing.example.com)')
          return
        }
        for (const flag of ['origins', 'rate-per-ip', 'rate'] as const) {
          if (args[flag] !== undefined) throw new UsageError(`--${flag} is for publishable keys: add --publishable, or leave it out for a secret key`)
        }
        if (args.scopes === undefined)
          throw new UsageError('key create needs --scopes <s1,s2,...> (or --publishable --origins <o1,o2,...> for a publishable key)')
      },
      async run(args, ctx) {
        const { createApiKey, createPublishableKey } = await accounts()
        const common = { businessId: args.business, name: args.name ?? null, expiresAt: args['expires-at'] ?? null }
        let created: CreatedApiKey
        let note: string
        if (args.publishable) {
          const origins = checked(args.origins, 'origins')
          created = await createPublishableKey(ctx, {
            ...common,
            origins,
            ratePerIp: args['rate-per-ip'] ?? parseRate(DEFAULT_RATE_PER_IP),
            rate: args.rate ?? parseRate(DEFAULT_RATE),
          })
          note = `A publishable key may appear in your pages; it works only from ${origins.join(', ')}.`
        } else {
          created = await createApiKey(ctx, { ...common, scopes: checked(args.scopes, 'scopes') })
          note = 'This is the only time the secret is shown; store it now.'
        }
        ctx.out(created, `created ${created.kind} key ${created.key_id} for business ${args.business}\n\n  ${created.api_key}\n\n${note}`)
      },
    }),
    origins: command({
      summary: "replace a publishable key's origins; used by every API replica within 1 s",
      options: { set: { ...origins, required: true } },
      operand: { name: 'key_id', help: 'the public key id (the part after AC_PUB_, before the dot)' },
      async run(args, ctx) {
        const result = await (await accounts()).setApiKeyOrigins(ctx, args.operand, args.set)
        ctx.out(result, `key ${result.key_id} now works from ${result.origins.join(', ')} (on every API replica within 1 s)`)
      },
    }),
    revoke: command({
      summary: 'revoke a key; refused by every API replica within 1 s',
      options: {},
      operand: { name: 'key_id', help: 'the public key id (the part after AC_LIVE_ or AC_PUB_, before the dot)' },
      async run(args, ctx) {
        await (await accounts()).revokeApiKey(ctx, args.operand)
        ctx.out({ key_id: args.operand, revoked: true }, `revoked key ${args.operand} (refused by every API replica within 1 s)`)
      },
    }),
    list: command({
      summary: "a business's keys: kind, name, scopes, origins, rates, state (never their secrets)",
      options: { business },
      async run(args, ctx) {
        const keys = await (await accounts()).listApiKeys(ctx, args.business)
        const state = (k: (typeof keys)[number]) => (k.revoked_at ? 'revoked' : k.expires_at && new Date(k.expires_at) < new Date() ? 'expired' : 'active')
        const browser = (k: (typeof keys)[number]) =>
          k.kind === 'publishable' ? `  ${(k.origins ?? []).join(',')}  ${k.rate_per_ip} per address, ${k.rate} in total` : ''
        ctx.out(
          { business_id: args.business, keys },
          keys.map((k) => `${k.key_id}  ${k.kind}  ${k.name ?? '-'}  ${k.scopes.join(',')}  ${state(k)}${browser(k)}`).join('\n') || 'no keys',
        )
      },
    }),
  },
}
