/**
 * `bun run cli outreach …`: the per-business webhook endpoint of contract §4.2 and the record of
 * what was sent to it. The signing secret is printed once by `set` (each `set` rotates it) and
 * stored only sealed with APP_SECRET; no other command prints it.
 */
import {
  disableOutreachEndpoint, listOutreachDeliveries, setOutreachEndpoint, showOutreachEndpoint,
} from '../../shared/outreach/operations'
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

export async function run(f: Flags, ctx: CliContext): Promise<void> {
  const [command] = f.positional
  switch (command) {
    case 'set': {
      const businessId = intFlag(f, 'business', true)
      const url = parseEndpointUrl(stringFlag(f, 'url', true))
      const { endpoint, secret, rotated } = await setOutreachEndpoint(ctx, businessId, url)
      ctx.out(
        { ...endpoint, secret, rotated },
        `${rotated ? 'updated' : 'set'} the outreach endpoint of business ${businessId}: ${endpoint.url}\n\n  signing secret: ${secret}\n\n` +
          `This is the only time the secret is shown; store it in the receiver now.${rotated ? ' The previous secret no longer signs new deliveries.' : ''}`,
      )
      return
    }
    case 'show': {
      const businessId = intFlag(f, 'business', true)
      const endpoint = await showOutreachEndpoint(ctx, businessId)
      if (!endpoint) throw new CliError(`business ${businessId} has no outreach endpoint (set one with: outreach set --business ${businessId} --url <URL>)`)
      ctx.out(endpoint, `business ${businessId}: ${endpoint.url}\n  enabled: ${endpoint.enabled}\n  created: ${endpoint.created_at}\n  updated: ${endpoint.updated_at}`)
      return
    }
    case 'disable': {
      const businessId = intFlag(f, 'business', true)
      const endpoint = await disableOutreachEndpoint(ctx, businessId)
      if (!endpoint) throw new CliError(`business ${businessId} has no outreach endpoint`)
      ctx.out(endpoint, `disabled the outreach endpoint of business ${businessId}; pending deliveries will be skipped (re-enable with outreach set, which also rotates the secret)`)
      return
    }
    case 'deliveries': {
      const businessId = intFlag(f, 'business', true)
      const limit = intFlag(f, 'limit') ?? 20
      if (limit > 1000) throw new CliError('--limit must be at most 1000')
      const deliveries = await listOutreachDeliveries(ctx, businessId, limit)
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
