/**
 * When an upload session stops accepting completion (contract §5). The API and the sweep read
 * the same deadline, so a session the sweep has not reached yet already answers as expired.
 */
import type { UploadSessionState } from './schemas'

/** Completion is accepted this long after `expires_at`, so an upload started just before the deadline can finish. */
export const COMPLETE_GRACE_MS = 5 * 60 * 1000

/** A pending session past its completion deadline is expired, swept or not. */
export function effectiveState(session: { state: UploadSessionState; expiresAt: Date }, now = Date.now()): UploadSessionState {
  return session.state === 'pending' && session.expiresAt.getTime() + COMPLETE_GRACE_MS < now ? 'expired' : session.state
}

/** Pending sessions whose `expires_at` lies before this are expired. */
export const expiredBefore = (now = new Date()) => new Date(now.getTime() - COMPLETE_GRACE_MS)
