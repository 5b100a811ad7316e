/** Replication positions for read routing (shared/platform/read-replica.ts). */
import type { Sql } from '../client'

export interface ReplicaStatus {
  /** False once promoted: then it no longer follows the primary and must not serve reads. */
  inRecovery: boolean
  /** WAL replayed so far (`pg_last_wal_replay_lsn()`), as text `X/Y`. */
  replayLsn: string | null
  /** Age of the last replayed commit while WAL waits to be applied; 0 when all received WAL is applied. */
  lagMs: number
  /** The WAL receiver is connected to a primary (else "caught up" only means cut off). */
  streaming: boolean
}

/**
 * One round trip on the replica. Lag is measured where it matters (replay, not receipt): while
 * received WAL waits to be applied, the replica shows the primary as of its last replayed commit.
 */
export async function replicaStatus(sql: Sql): Promise<ReplicaStatus> {
  const [row] = await sql<{ in_recovery: boolean; replay_lsn: string | null; lag_ms: number; streaming: boolean }[]>`
    select pg_is_in_recovery() as in_recovery,
           pg_last_wal_replay_lsn()::text as replay_lsn,
           case when pg_last_wal_receive_lsn() is distinct from pg_last_wal_replay_lsn()
                then coalesce(extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000, 0)::float8
                else 0 end as lag_ms,
           exists (select 1 from pg_stat_wal_receiver where status = 'streaming') as streaming`
  return { inRecovery: row.in_recovery, replayLsn: row.replay_lsn, lagMs: row.lag_ms, streaming: row.streaming }
}

/** The primary's WAL insert position: at or past the end of every commit this session made. */
export async function currentWalLsn(sql: Sql): Promise<string> {
  const [row] = await sql<{ lsn: string }[]>`select pg_current_wal_insert_lsn()::text as lsn`
  return row.lsn
}
