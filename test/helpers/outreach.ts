/** Outreach fixtures: an endpoint configured the way `cli outreach set` does it, and an inquiry body. */
import { sql } from 'drizzle-orm'
import { upsertOutreachEndpoint } from '../../db/queries/outreach'
import { endpointSecretContext } from '../../shared/outreach/delivery'
import { generateSigningSecret } from '../../shared/outreach/signature'
import { sealSecret } from '../../shared/platform/secret-box'
import type { TestContext } from './context'

export async function configureEndpoint(ctx: TestContext, businessId: number, url: string): Promise<string> {
  const secret = generateSigningSecret()
  await upsertOutreachEndpoint(ctx.deps.database.db, businessId, url, sealSecret(ctx.config.appSecret, secret, endpointSecretContext(businessId)))
  return secret
}

export function inquiryBody(overrides: Record<string, unknown> = {}): Record<string, any> {
  return {
    contact: { name: 'Ana García', email: 'ana@example.com', phone: '+34 600 111 222' },
    message: '¿Sigue disponible? Me gustaría visitarlo.',
    source: 'web-contact-form',
    source_page: 'https://inmobiliaria.example/propiedades/1',
    ...overrides,
  }
}

export async function deliveriesOf(ctx: TestContext, businessId: number) {
  return [
    ...(await ctx.deps.database.db.execute<{
      id: string
      state: string
      attempts: number
      inquiry_id: number
      last_status_code: number | null
      last_error: string | null
    }>(
      sql`select id, state, attempts, inquiry_id, last_status_code, last_error from outreach_deliveries
        where business_id = ${businessId} order by created_at, id`,
    )),
  ]
}

export async function attemptsOf(ctx: TestContext, deliveryId: string) {
  return [
    ...(await ctx.deps.database.db.execute<{ attempt: number; status_code: number | null; latency_ms: number; error: string | null }>(
      sql`select attempt, status_code, latency_ms, error from outreach_attempts where delivery_id = ${deliveryId} order by attempt`,
    )),
  ]
}
