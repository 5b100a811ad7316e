/**
 * Idempotency-Key (api-spec §8, architecture.md): one mechanism for every create. The first
 * request claims (API key, operation, key) with an insert that cannot race; its writes and the
 * stored answer commit in one transaction, so a crash leaves either both or neither. A twin
 * arriving meanwhile waits for a notification that the answer is stored and replays it; another
 * body under the same key is 409. Answers are kept as the exact text that was sent, so a replay,
 * refusals included, is the first answer byte for byte (contract §15).
 */
import { createHash } from 'node:crypto'
import { databaseOf, type Database, type Db } from '../../db/client'
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  deleteExpiredIdempotencyKeys,
  findIdempotencyKey,
  IDEMPOTENCY_CHANNEL,
  reclaimIdempotencyKey,
  releaseIdempotencyKey,
} from '../../db/queries/idempotency'
import { AppError, ERROR_CODES, type ErrorCode } from './errors'
import type { OperationId } from '../access/operations'

export interface IdempotentResult<B = unknown> {
  status: number
  body: B
  replayed: boolean
}

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]

/** How long a twin waits for the first request before answering 409. */
const WAIT_FOR_TWIN_MS = 10_000
/** A waiting twin reads the row again this often even without a notification (one may be lost). */
const RECHECK_MS = 500
/** An in-progress claim older than this belongs to a request that died; it may be taken over. */
const ABANDONED_AFTER_MS = 60_000
const DAY_MS = 24 * 3600 * 1000

export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex')
}

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` are the same request. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
}

/**
 * A stored refusal (status ≥ 400) being replayed: the HTTP tier sends `text`, the problem+json
 * body exactly as it was first sent (its `request_id` names the request that was refused), with
 * `Idempotent-Replayed: true`. Still an AppError of the stored code for anything that classifies it.
 */
export class ReplayedRefusal extends AppError {
  constructor(
    readonly responseStatus: number,
    readonly text: string,
  ) {
    const stored = JSON.parse(text) as { code?: string; detail?: string }
    super(stored.code !== undefined && stored.code in ERROR_CODES ? (stored.code as ErrorCode) : 'conflict', stored.detail ?? 'Replayed answer')
    this.name = 'ReplayedRefusal'
  }
}

/**
 * A refusal (4xx) thrown by the handler of a request that holds its key's claim: the key's answer
 * too. The HTTP tier renders it like the refusal it wraps (same code, detail and fields) and
 * stores the exact problem+json text it sends with `storeAnswer`, completing the claim and waking
 * its twins; the text carries the request id, which only the HTTP tier knows. Should it never be
 * stored, the claim is taken over after ABANDONED_AFTER_MS like that of a request that died.
 */
export class ClaimedRefusal extends AppError {
  constructor(
    readonly refusal: AppError,
    readonly storeAnswer: (status: number, text: string) => Promise<void>,
  ) {
    super(refusal.code, refusal.detail, { errors: refusal.errors, extra: refusal.extra, cause: refusal })
    this.name = 'ClaimedRefusal'
  }
}

/**
 * Runs `handler` at most once per (apiKeyId, operation, key) within 24 h. Without a key it just
 * runs it in a transaction. Answers below 500 (including 409 and 422 from the handler) are
 * stored and replayed; a 5xx or crash releases the key so the client can retry.
 */
export async function idempotent<B>(
  db: Db,
  scope: { apiKeyId: number; operation: OperationId; key: string | undefined; body: unknown },
  handler: (tx: Tx) => Promise<{ status: number; body: B }>,
): Promise<IdempotentResult<B>> {
  if (scope.key === undefined) {
    const result = await db.transaction(handler)
    return { ...result, replayed: false }
  }
  const hash = requestHash(scope.body)
  const deadline = Date.now() + WAIT_FOR_TWIN_MS
  let claimId: number | null = null
  // A row exists: read it again rather than try to claim (until it is gone).
  let rowExists = false
  let subscription: Subscription | undefined
  try {
    for (;;) {
      if (!rowExists) {
        claimId = await claimIdempotencyKey(db, scope.apiKeyId, scope.operation, scope.key, hash)
        if (claimId !== null) break
      }
      const row = await findIdempotencyKey(db, scope.apiKeyId, scope.operation, scope.key)
      rowExists = row !== null
      if (!row) continue // released or deleted between insert and select: claim again
      const expired = row.ageMs >= DAY_MS
      const abandoned = row.state === 'in_progress' && row.ageMs >= ABANDONED_AFTER_MS
      if (!expired && row.requestHash !== hash) {
        throw new AppError('idempotency_conflict', 'This Idempotency-Key was already used with a different request body')
      }
      if (!expired && row.state === 'done') return replay<B>(...storedAnswer(row))
      if (expired || abandoned) {
        if (await reclaimIdempotencyKey(db, row.id, hash)) {
          claimId = row.id
          break
        }
        continue
      }
      if (Date.now() > deadline) throw new AppError('idempotency_conflict', 'A request with this Idempotency-Key is still being processed; retry later')
      if (subscription?.id !== row.id) {
        subscription?.close()
        // Subscribed before the next read, so an answer stored in between is not missed.
        subscription = await answersOf(db).subscribe(row.id)
        continue
      }
      await subscription.next(Math.min(RECHECK_MS, Math.max(0, deadline - Date.now())))
    }
  } finally {
    subscription?.close()
  }
  // The loop is left only with a claim (or by returning or throwing).
  if (claimId === null) throw new Error('idempotent: left the claim loop without a claim')
  return runClaimed(db, claimId, handler)
}

/** A done key's stored answer (claim and answer are written together, so a done row has both). */
function storedAnswer(row: { responseStatus: number | null; responseText: string | null }): [number, string] {
  if (row.responseStatus === null || row.responseText === null) throw new Error('idempotency key done without its stored answer')
  return [row.responseStatus, row.responseText]
}

function replay<B>(status: number, text: string): IdempotentResult<B> {
  if (status >= 400) throw new ReplayedRefusal(status, text)
  // The route serialises the parsed body again: JSON.stringify of JSON.parse of its own output
  // is the same text (key order, number and string forms), so the replay is the same bytes.
  return { status, body: JSON.parse(text) as B, replayed: true }
}

async function runClaimed<B>(db: Db, claimId: number, handler: (tx: Tx) => Promise<{ status: number; body: B }>): Promise<IdempotentResult<B>> {
  try {
    const result = await db.transaction(async (tx) => {
      const r = await handler(tx)
      await completeIdempotencyKey(tx, claimId, r.status, JSON.stringify(r.body))
      return r
    })
    return { ...result, replayed: false }
  } catch (error) {
    if (error instanceof AppError && error.status < 500) {
      // A refusal is an answer too, stored as the problem+json text that is sent for it.
      throw new ClaimedRefusal(error, (status, text) =>
        completeIdempotencyKey(db, claimId, status, text).catch(() => releaseIdempotencyKey(db, claimId).catch(() => {})),
      )
    }
    await releaseIdempotencyKey(db, claimId).catch(() => {})
    throw error
  }
}

/** Housekeeping: answers older than the 24 h window are never replayed again (api-spec §8). */
export const deleteExpiredIdempotencyAnswers = (db: Db) => deleteExpiredIdempotencyKeys(db)

interface Subscription {
  id: number
  /** Resolves at the next notification for the row (or one that came since the last call), or after `ms`. */
  next(ms: number): Promise<void>
  close(): void
}

/**
 * One LISTEN per Database for the whole process; waiting twins subscribe to their row's id. The
 * connection comes from the Database (db/client.ts), which decides how LISTEN reaches PostgreSQL.
 * Without one (a handle not made by createDatabase), or while LISTEN is failing, twins rely on
 * the bounded re-check alone.
 */
class AnswerNotifications {
  private readonly waiting = new Map<number, Set<() => void>>()
  private listening: Promise<boolean> | undefined

  constructor(private readonly database: Database | undefined) {}

  async subscribe(id: number): Promise<Subscription> {
    await this.listen()
    let pending = false
    let wake: (() => void) | undefined
    const onNotify = () => {
      if (wake) wake()
      else pending = true
    }
    const set = this.waiting.get(id) ?? new Set()
    set.add(onNotify)
    this.waiting.set(id, set)
    return {
      id,
      next: (ms) => {
        if (pending) {
          pending = false
          return Promise.resolve()
        }
        return new Promise<void>((resolve) => {
          const timer = setTimeout(done, ms)
          function done() {
            clearTimeout(timer)
            wake = undefined
            resolve()
          }
          wake = done
        })
      },
      close: () => {
        set.delete(onNotify)
        if (set.size === 0 && this.waiting.get(id) === set) this.waiting.delete(id)
        wake?.()
      },
    }
  }

  /** LISTEN once; waits at most one re-check interval for it, and tries again on a later wait after a failure. */
  private listen(): Promise<boolean> {
    if (!this.database) return Promise.resolve(false)
    this.listening ??= this.database
      .listen(IDEMPOTENCY_CHANNEL, (payload) => this.notify(Number(payload)))
      .then(
        () => true,
        () => {
          this.listening = undefined
          return false
        },
      )
    let timer: ReturnType<typeof setTimeout> | undefined
    return Promise.race([this.listening, new Promise<boolean>((r) => (timer = setTimeout(() => r(false), RECHECK_MS)))]).finally(() => clearTimeout(timer))
  }

  private notify(id: number): void {
    for (const wake of this.waiting.get(id) ?? []) wake()
  }
}

const notifications = new WeakMap<object, AnswerNotifications>()
function answersOf(db: Db): AnswerNotifications {
  const database = databaseOf(db)
  const key: object = database ?? db
  let hub = notifications.get(key)
  if (!hub) {
    hub = new AnswerNotifications(database)
    notifications.set(key, hub)
  }
  return hub
}
