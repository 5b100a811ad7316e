/**
 * Operators' view of a business's webhook endpoints (contract §10.2): status, why one is
 * disabled, since when it fails, and its deliveries per state. Never prints a secret (only the
 * API's create and rotate answers show one).
 */
import { businessFlag, command, type Group } from '../spec'

export const webhooks: Group = {
  name: 'webhooks',
  summary: "a business's webhook endpoints (contract §10.2)",
  commands: {
    list: command({
      summary: 'endpoints with status, disabled reason and deliveries per state (never secrets)',
      options: { business: businessFlag },
      async run(args, ctx) {
        const { summariseWebhookEndpoints } = await import('../../shared/webhooks/operations')
        const { requireBusiness } = await import('../../shared/access/accounts')
        const businessId = args.business
        await requireBusiness(ctx, businessId)
        const endpoints = await summariseWebhookEndpoints(ctx, businessId)
        const text =
          endpoints.length === 0
            ? `business ${businessId} has no webhook endpoints`
            : endpoints
                .map((e) =>
                  [
                    `#${e.id}  ${e.status}  ${e.url}`,
                    `    events: ${e.enabled_events.join(', ')}`,
                    ...(e.disabled_reason ? [`    disabled: ${e.disabled_reason}`] : []),
                    ...(e.failing_since ? [`    failing since: ${e.failing_since}`] : []),
                    `    deliveries: ${
                      Object.entries(e.deliveries)
                        .map(([s, n]) => `${s} ${n}`)
                        .join(', ') || 'none'
                    }`,
                  ].join('\n'),
                )
                .join('\n')
        ctx.out({ business_id: businessId, endpoints }, text)
      },
    }),
  },
}
