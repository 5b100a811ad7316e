/**
 * The upload sweep (contract §5): pending sessions past their deadline become `expired`, and
 * the originals of their files and of every failed file are deleted from private storage. A
 * delete that fails is retried on the next run (the file's purged_at stays null).
 */
import { deleteOldExpiredSessions, expireSessions, markPurged, originalsToPurge } from '../db/queries/images'
import type { WorkerDeps } from './deps'

export async function sweepUploads(deps: Pick<WorkerDeps, 'database' | 'storage'>): Promise<{ expired: number; purged: number }> {
  const { db } = deps.database
  const expired = await expireSessions(db)
  let purged = 0
  for (;;) {
    const batch = await originalsToPurge(db)
    if (batch.length === 0) break
    const done: string[] = []
    await Promise.all(batch.map(async (f) => {
      try {
        await deps.storage.delete('private', f.originalKey)
        done.push(f.fileId)
      } catch {}
    }))
    await markPurged(db, done)
    purged += done.length
    if (done.length < batch.length) break // storage trouble: try again next run
  }
  await deleteOldExpiredSessions(db)
  return { expired: expired.length, purged }
}
