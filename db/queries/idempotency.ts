import { sql } from 'drizzle-orm'
import type { Db } from '../client'

/** NOTIFY channel: the payload is the id of a row whose answer was stored or whose claim was released. */
export const IDEMPOTENCY_CHANNEL = 'idempotency_keys'

export interface IdempotencyRow {
  id: number
  requestHash: string
  state: 'in_progress' | 'done'
  responseStatus: number | null
  /** The answer's body exactly as it was sent (text, so nothing reorders it). */
  responseText: string | null
  ageMs: number
}

/** Claims the key; returns the new row id, or null when a row already exists. */
export async function claimIdempotencyKey(db: Db, apiKeyId: number, operation: string, key: string, requestHash: string): Promise<number | null> {
  const rows = await db.execute<{ id: number }>(sql`
    insert into idempotency_keys (api_key_id, operation, key, request_hash)
    values (${apiKeyId}, ${operation}, ${key}, ${requestHash})
    on conflict (api_key_id, operation, key) do nothing
    returning id`)
  return rows[0]?.id ?? null
}

export async function findIdempotencyKey(db: Db, apiKeyId: number, operation: string, key: string): Promise<IdempotencyRow | null> {
  const rows = await db.execute<{
    id: number
    request_hash: string
    state: 'in_progress' | 'done'
    response_status: number | null
    response_body: string | null
    age_ms: number
  }>(sql`
    select id, request_hash, state, response_status, response_body,
           (extract(epoch from now() - created_at) * 1000)::float8 as age_ms
    from idempotency_keys where api_key_id = ${apiKeyId} and operation = ${operation} and key = ${key}`)
  const r = rows[0]
  return r ? { id: r.id, requestHash: r.request_hash, state: r.state, responseStatus: r.response_status, responseText: r.response_body, ageMs: r.age_ms } : null
}

/** Takes over an expired or abandoned row (only if it is still the one we saw). */
export async function reclaimIdempotencyKey(db: Db, id: number, requestHash: string): Promise<boolean> {
  const rows = await db.execute(sql`
    update idempotency_keys set request_hash = ${requestHash}, state = 'in_progress', response_status = null, response_body = null, created_at = now()
    where id = ${id} and (created_at < now() - interval '24 hours' or state = 'in_progress')
    returning id`)
  return rows.length > 0
}

/**
 * Stores the answer and notifies waiting twins. Inside a transaction the notification is
 * delivered at commit, together with the answer; never before it.
 */
export async function completeIdempotencyKey(db: Db, id: number, status: number, text: string): Promise<void> {
  await db.execute(sql`
    with done as (update idempotency_keys set state = 'done', response_status = ${status}, response_body = ${text} where id = ${id} returning id)
    select pg_notify(${IDEMPOTENCY_CHANNEL}, id::text) from done`)
}

/** Gives the key up (the request failed with a 5xx); waiting twins are notified and claim it. */
export async function releaseIdempotencyKey(db: Db, id: number): Promise<void> {
  await db.execute(sql`
    with gone as (delete from idempotency_keys where id = ${id} and state = 'in_progress' returning id)
    select pg_notify(${IDEMPOTENCY_CHANNEL}, id::text) from gone`)
}

/** api-spec §8: keys live 24 hours. Uses idempotency_keys_created_idx. */
export async function deleteExpiredIdempotencyKeys(db: Db): Promise<number> {
  const rows = await db.execute(sql`delete from idempotency_keys where created_at < now() - interval '24 hours' returning id`)
  return rows.length
}

/**
 * Erasure (contract §13): the stored answers of this business's keys that name the lead — a
 * createLead answer (`id`, or `existing_id` of a 409) or a createLeadInquiry answer (`lead_id`) —
 * are deleted with their request hashes, which were computed from the person's data.
 */
export async function deleteAnswersNamingLead(db: Db, businessId: number, leadId: number): Promise<number> {
  const id = String(leadId)
  const rows = await db.execute(sql`
    delete from idempotency_keys k using api_keys a
    where a.id = k.api_key_id and a.business_id = ${businessId} and k.state = 'done'
      and k.operation in ('createLead', 'createLeadInquiry') and k.response_body like ${`%${id}%`}
      and (case when k.response_body ~ '^\\s*\\{' then
             (k.operation = 'createLead' and (k.response_body::jsonb->>'id' = ${id} or k.response_body::jsonb->>'existing_id' = ${id}))
             or (k.operation = 'createLeadInquiry' and k.response_body::jsonb->>'lead_id' = ${id})
           else false end)
    returning k.id`)
  return rows.length
}
