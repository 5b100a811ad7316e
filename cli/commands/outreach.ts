/**
 * `bun run cli outreach …`: the per-business webhook endpoint of contract §4.2 and the record of
 * what was sent to it. The signing secret is printed once by `set` (each `set` rotates it) and
 * stored only sealed with APP_SECRET; no other command prints it.
 */
import { findBusiness } from '../../db/queries/businesses'
import {
  disableOutreachEndpoint, findOutreachEndpoint, listOutreachDeliveries, upsertOutreachEndpoint, type OutreachEndpointRow,
} from '../../db/queries/outreach'
import { endpointSecretContext } from '../../shared/outreach/delivery'
import { generateSigningSecret } from '../../shared/outreach/signature'
import { sealSecret } from '../../shared/platform/secret-box'
import { CliError, intFlag, stringFlag, type CliContext, type Flags } from '../io'

export const usage = `  outreach set --business <id> --url <http(s) URL> [--json]      (prints the signing secret once; re-set rotates it)
  outreach show --business <id> [--json]                         (never prints the secret)
  outreach disable --business <id> [--json]
  outreach deliveries --business <id> [--limit <n, default 20>] [--json]`

/** contract §8: any http or https URL, loopback included (operators set them). */
export function parseEndpointUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new CliError(`--url must be an absolute http or https URL, got "${raw}"`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`--url must use http or https, got "${url.protocol.replace(/:$/, '')}"`)
  if (raw.length > 2000) throw new CliError('--url must be at most 2000 characters')
  return url.href
}

const endpointView = (e: OutreachEndpointRow) => ({
  business_id: e.businessId,
  url: e.url,
  enabled: e.enabled,
  created_at: e.createdAt.toISOString(),
  updated_at: e.updatedAt.toISOString(),
})

async function requireBusiness(ctx: CliContext, businessId: number): Promise<void> {
  if (!(await findBusiness(ctx.database.db, businessId))) throw new CliError(`business ${businessId} does not exist`)
}

export async function run(f: Flags, ctx: CliContext): Promise<void> {
  const [command] = f.positional
  const db = ctx.database.db
  switch (command) {
    case 'set': {
      const businessId = intFlag(f, 'business', true)
      const url = parseEndpointUrl(stringFlag(f, 'url', true))
      await requireBusiness(ctx, businessId)
      const secret = generateSigningSecret()
      const { row, created } = await upsertOutreachEndpoint(db, businessId, url, sealSecret(ctx.config.appSecret, secret, endpointSecretContext(businessId)))
      ctx.out(
        { ...endpointView(row), secret, rotated: !created },
        `${created ? 'set' : 'updated'} the outreach endpoint of business ${businessId}: ${row.url}\n\n  signing secret: ${secret}\n\n` +
          `This is the only time the secret is shown; store it in the receiver now.${created ? '' : ' The previous secret no longer signs new deliveries.'}`,
      )
      return
    }
    case 'show': {
      const businessId = intFlag(f, 'business', true)
      await requireBusiness(ctx, businessId)
      const endpoint = await findOutreachEndpoint(db, businessId)
      if (!endpoint) throw new CliError(`business ${businessId} has no outreach endpoint (set one with: outreach set --business ${businessId} --url <URL>)`)
      const v = endpointView(endpoint)
      ctx.out(v, `business ${businessId}: ${v.url}\n  enabled: ${v.enabled}\n  created: ${v.created_at}\n  updated: ${v.updated_at}`)
      return
    }
    case 'disable': {
      const businessId = intFlag(f, 'business', true)
      await requireBusiness(ctx, businessId)
      const endpoint = await disableOutreachEndpoint(db, businessId)
      if (!endpoint) throw new CliError(`business ${businessId} has no outreach endpoint`)
      ctx.out(endpointView(endpoint), `disabled the outreach endpoint of business ${businessId}; pending deliveries will be skipped (re-enable with outreach set, which also rotates the secret)`)
      return
    }
    case 'deliveries': {
      const businessId = intFlag(f, 'business', true)
      const limit = intFlag(f, 'limit') ?? 20
      if (limit > 1000) throw new CliError('--limit must be at most 1000')
      await requireBusiness(ctx, businessId)
      const deliveries = (await listOutreachDeliveries(db, businessId, limit)).map((d) => ({
        id: d.id,
        inquiry_id: d.inquiryId,
        state: d.state,
        attempts: d.attempts,
        last_status_code: d.lastStatusCode,
        last_error: d.lastError,
        next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
        created_at: d.createdAt.toISOString(),
        delivered_at: d.deliveredAt?.toISOString() ?? null,
        attempt_log: d.attemptRows.map((a) => ({
          attempt: a.attempt,
          attempted_at: a.attemptedAt.toISOString(),
          status_code: a.statusCode,
          latency_ms: a.latencyMs,
          error: a.error,
        })),
      }))
      const text = deliveries.length === 0
        ? `business ${businessId} has no outreach deliveries`
        : deliveries
            .map((d) => {
              const head = `${d.id}  inquiry ${d.inquiry_id}  ${d.state}  attempts ${d.attempts}  last ${d.last_status_code ?? d.last_error ?? '-'}  created ${d.created_at}` +
                (d.state === 'pending' && d.next_attempt_at ? `  next ${d.next_attempt_at}` : '')
              const lines = d.attempt_log.map((a) => `    #${a.attempt}  ${a.attempted_at}  ${a.status_code ?? '---'}  ${a.latency_ms} ms${a.error ? `  ${a.error}` : ''}`)
              return [head, ...lines].join('\n')
            })
            .join('\n')
      ctx.out({ business_id: businessId, deliveries }, text)
      return
    }
    default:
      throw new CliError(`unknown command "outreach ${command ?? ''}"\n${usage}`)
  }
}
