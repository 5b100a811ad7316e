/**
 * Read-your-writes with a read replica (docs/operations.md "Read replica"): once a write of a
 * business has answered, its position is recorded before the answer leaves, so the next read of
 * that business (from any API replica) is served by the primary until the replica replays it.
 * Without DATABASE_READ_URL this plugin does nothing.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { requestMeta } from '../request-meta'

/** Rental ingest writes nothing itself (the worker does, later) and is the hot path: no marker. */
const INGEST_PATH = '/v1/leads/ingest'

export function readYourWritesPlugin(deps: Pick<AppDeps, 'reads'>) {
  return new Elysia({ name: 'read-your-writes' }).onAfterHandle({ as: 'global' }, async ({ request }) => {
    if (!deps.reads || request.method === 'GET' || request.method === 'HEAD') return
    const businessId = requestMeta(request)?.auth?.business.id
    if (businessId === undefined || new URL(request.url).pathname === INGEST_PATH) return
    await deps.reads.noteWrite(businessId)
  })
}
