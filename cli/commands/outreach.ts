/**
 * The per-business webhook endpoint of contract §4.2 and the record of what was sent to it. The
 * signing secret is printed once by `set` (each `set` rotates it) and stored only sealed with
 * APP_SECRET; no other command prints it.
 */
import { businessFlag, CliError, command, positiveInt, UsageError, type Group } from '../spec'

/** contract §8: any http or https URL, loopback included (operators set them). */
export function parseEndpointUrl(raw: string, flag = '--url'): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UsageError(`${flag} must be an absolute http or https URL, got "${raw}"`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${flag} must use http or https, got "${url.protocol.replace(/:$/, '')}"`)
  if (raw.length > 2000) throw new UsageError(`${flag} must be at most 2000 characters`)
  return url.href
}

const operations = () => import('../../shared/outreach/operations')

function deliveryLimit(raw: string, flag: string): number {
  const limit = positiveInt(raw, flag)
  if (limit > 1000) throw new UsageError(`${flag} must be at most 1000`)
  return limit
}

export const outreach: Group = {
  name: 'outreach',
  summary: "a business's outreach endpoint for inquiries (contract §4.2)",
  commands: {
    set: command({
      summary: 'set the endpoint; prints the signing secret once (setting again rotates it)',
      options: { business: businessFlag, url: { value: '<http(s) URL>', required: true, help: 'where inquiries are POSTed', parse: parseEndpointUrl } },
      async run(args, ctx) {
        const { endpoint, secret, rotated } = await (await operations()).setOutreachEndpoint(ctx, args.business, args.url)
        ctx.out(
          { ...endpoint, secret, rotated },
          `${rotated ? 'updated' : 'set'} the outreach endpoint of business ${args.business}: ${endpoint.url}\n\n  signing secret: ${secret}\n\n` +
            `This is the only time the secret is shown; store it in the receiver now.${rotated ? ' The previous secret no longer signs new deliveries.' : ''}`,
        )
      },
    }),
    show: command({
      summary: 'the endpoint and whether it is enabled (never the secret)',
      options: { business: businessFlag },
      async run(args, ctx) {
        const endpoint = await (await operations()).showOutreachEndpoint(ctx, args.business)
        if (!endpoint)
          throw new CliError(`business ${args.business} has no outreach endpoint (set one with: outreach set --business ${args.business} --url <URL>)`)
        ctx.out(
          endpoint,
          `business ${args.business}: ${endpoint.url}\n  enabled: ${endpoint.enabled}\n  created: ${endpoint.created_at}\n  updated: ${endpoint.updated_at}`,
        )
      },
    }),
    disable: command({
      summary: 'stop sending; pending deliveries are skipped',
      options: { business: businessFlag },
      async run(args, ctx) {
        const endpoint = await (await operations()).disableOutreachEndpoint(ctx, args.business)
        if (!endpoint) throw new CliError(`business ${args.business} has no outreach endpoint`)
        ctx.out(
          endpoint,
          `disabled the outreach endpoint of business ${args.business}; pending deliveries ` +
            `will be skipped (re-enable with outreach set, which also rotates the secret)`,
        )
      },
    }),
    deliveries: command({
      summary: 'recent deliveries, newest first, with every attempt (status, latency, response code)',
      options: { business: businessFlag, limit: { value: '<n>', help: 'how many (default 20, at most 1000)', parse: deliveryLimit } },
      async run(args, ctx) {
        const businessId = args.business
        const deliveries = await (await operations()).listOutreachDeliveries(ctx, businessId, args.limit ?? 20)
        const text =
          deliveries.length === 0
            ? `business ${businessId} has no outreach deliveries`
            : deliveries
                .map((d) => {
                  const head =
                    `${d.id}  inquiry ${d.inquiry_id}  ${d.state}  attempts ${d.attempts}  ` +
                    `last ${d.last_status_code ?? d.last_error ?? '-'}  created ${d.created_at}` +
                    (d.state === 'pending' && d.next_attempt_at ? `  next ${d.next_attempt_at}` : '')
                  const lines = d.attempt_log.map(
                    (a) => `    #${a.attempt}  ${a.attempted_at}  ${a.status_code ?? '---'}  ${a.latency_ms} ms${a.error ? `  ${a.error}` : ''}`,
                  )
                  return [head, ...lines].join('\n')
                })
                .join('\n')
        ctx.out({ business_id: businessId, deliveries }, text)
      },
    }),
  },
}
