/**
 * The job catalog (architecture.md "Queues", conventions §6): per queue its job name, payload
 * schema, job-id rule and default options. `enqueue()` in queues.ts is the only producer and
 * every processor validates its payload against the schema here.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { DeduplicationOptions, JobsOptions } from 'bullmq'
import type { Database } from '../../db/client'
import type { QueueName } from './queue-names'

/** One accepted rental lead, ready to insert (shared/leads/ingest.ts builds it; every column is explicit). */
export const IngestLead = Type.Object({
  businessId: Type.Integer({ minimum: 1 }),
  /** When the API accepted it: becomes created_at/updated_at, so order reflects acceptance, not insertion. */
  receivedAt: Type.String(),
  name: Type.String(),
  phone: Type.String(),
  source: Type.Union([Type.String(), Type.Null()]),
  type: Type.Literal('demandante'),
  operation: Type.Literal('alquiler'),
  propertyTypes: Type.Array(Type.String()),
  rating: Type.Integer(),
  urgency: Type.Literal('alta-urgencia'),
  budgetMax: Type.Union([Type.Number(), Type.Null()]),
  minBedrooms: Type.Union([Type.Integer(), Type.Null()]),
  searchLocation: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  notes: Type.String(),
})

/** One job per micro-batch of the API (api/ingest-batcher.ts), leads of any businesses. */
export const LeadIngestPayload = Type.Object({
  leads: Type.Array(IngestLead, { minItems: 1, maxItems: 1000 }),
})

export const UploadCompletePayload = Type.Object({ uploadId: Type.String() })
export const ImageWatermarkPayload = Type.Object({ imageId: Type.String() })
export const CatalogueReindexPayload = Type.Union([
  Type.Object({ propertyId: Type.Integer({ minimum: 1 }) }),
  Type.Object({ businessId: Type.Integer({ minimum: 1 }), afterId: Type.Integer({ minimum: 0 }), batchSize: Type.Integer({ minimum: 1 }) }),
])
export const OutreachPayload = Type.Object({ deliveryId: Type.String() })
export const VideoTranscodePayload = Type.Object({ videoId: Type.String() })
/** One row of `storage_deletions` (its id). */
export const StorageCleanupPayload = Type.Object({ deletionId: Type.Integer({ minimum: 1 }) })
/** Deliver what is due for one webhook endpoint (contract §10.2; shared/webhooks/delivery.ts). */
export const WebhookDeliveryPayload = Type.Object({ endpointId: Type.Integer({ minimum: 1 }) })
/**
 * The Redis side of a lead's erasure (contract §13): ids and keyed hashes (HMAC with APP_SECRET)
 * of the person's phone and email, never the values themselves.
 */
export const LeadErasurePayload = Type.Object({
  businessId: Type.Integer({ minimum: 1 }),
  leadId: Type.Integer({ minimum: 1 }),
  fingerprints: Type.Array(Type.String({ maxLength: 128 }), { maxItems: 4 }),
})

interface JobDefinition<S extends TSchema, Id extends string | undefined> {
  queue: QueueName
  /** `domain.verb` (conventions §12). */
  name: string
  payload: S
  /** BullMQ job id from the business key, so a double enqueue is one job; undefined → random. */
  jobId: (payload: Static<S>) => Id
  /** BullMQ deduplication from the business key, for a queue that wants one live job per key. */
  deduplication?: (payload: Static<S>) => DeduplicationOptions
  options: JobsOptions
}

// Id is inferred per queue, so the queues keyed by a business key give a `string` to their sweeps.
const define = <S extends TSchema, Id extends string | undefined>(d: JobDefinition<S, Id>) => d

// Retention: completed jobs are kept briefly for `cli queues` and debugging. A failed job is a
// job that exhausted its retries (or failed permanently): it is kept until an operator retries or
// drops it (`cli queues`), never purged by age, because an ingest job is the only copy of its
// leads and the other jobs' data waits, `failed`, for that decision (docs/operations.md "Exhausted jobs").
const keepCompleted = { age: 3600, count: 1000 }
const keepFailed = false

export const JOBS = {
  'lead-ingest': define({
    queue: 'lead-ingest',
    name: 'lead.ingest',
    payload: LeadIngestPayload,
    // De-duplication is the database's unique constraint (architecture.md), not the job id.
    jobId: () => undefined,
    // The attempts count failures other than an unreachable database: while PostgreSQL is down
    // the worker waits without using them up (worker/queue-config.ts, QUEUE_RETRY_POLICY).
    options: { attempts: 10, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true, removeOnFail: keepFailed },
  }),
  'upload-complete': define({
    queue: 'upload-complete',
    name: 'upload.complete',
    payload: UploadCompletePayload,
    jobId: (p) => `upload-${p.uploadId}`,
    options: { attempts: 5, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: keepCompleted, removeOnFail: keepFailed },
  }),
  'image-watermark': define({
    queue: 'image-watermark',
    name: 'image.watermark',
    payload: ImageWatermarkPayload,
    jobId: (p) => `image-${p.imageId}`,
    options: { attempts: 5, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: keepCompleted, removeOnFail: keepFailed },
  }),
  'catalogue-reindex': define({
    queue: 'catalogue-reindex',
    name: 'catalogue.reindex',
    payload: CatalogueReindexPayload,
    // No fixed id: a reindex requested while one is running must run again to see the newer state;
    // the processor is idempotent (it rebuilds from the source tables).
    jobId: () => undefined,
    options: { attempts: 8, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true, removeOnFail: keepFailed },
  }),
  outreach: define({
    queue: 'outreach',
    name: 'outreach.deliver',
    payload: OutreachPayload,
    jobId: (p) => `delivery-${p.deliveryId}`,
    // 20 attempts of exponential backoff from 30 s cover well over 24 h (contract §4.2);
    // the processor caps each wait at 6 h so the tail stays useful.
    options: { attempts: 20, backoff: { type: 'outreach' }, removeOnComplete: keepCompleted, removeOnFail: keepFailed },
  }),
  'video-transcode': define({
    queue: 'video-transcode',
    name: 'video.transcode',
    payload: VideoTranscodePayload,
    jobId: (p) => `video-${p.videoId}`,
    // A bad file fails at once (UnrecoverableError); retries are for ffmpeg or storage trouble,
    // and each one redoes the whole transcode, so a few spaced ones.
    options: { attempts: 3, backoff: { type: 'exponential', delay: 10_000 }, removeOnComplete: keepCompleted, removeOnFail: keepFailed },
  }),
  'storage-cleanup': define({
    queue: 'storage-cleanup',
    name: 'storage.delete',
    payload: StorageCleanupPayload,
    jobId: (p) => `deletion-${p.deletionId}`,
    // Retried until done (contract §9.1): 12 attempts doubling from 5 s span about 3 hours; the
    // row stays, with its last error, and the maintenance sweep queues it again after that.
    options: { attempts: 12, backoff: { type: 'exponential', delay: 5000 }, removeOnComplete: true, removeOnFail: keepFailed },
  }),
  'webhook-delivery': define({
    queue: 'webhook-delivery',
    name: 'webhook.deliver',
    payload: WebhookDeliveryPayload,
    // One runner per endpoint at a time comes from BullMQ deduplication (keepLastIfActive), not
    // the job id: a runner added while one is active runs right after it, so no wake-up is lost
    // (shared/webhooks/wake.ts). Retries of deliveries are rows in PostgreSQL, not job attempts:
    // these attempts cover a runner that crashed on something else than an endpoint.
    jobId: () => undefined,
    deduplication: (p) => ({ id: `endpoint-${p.endpointId}`, keepLastIfActive: true }),
    options: { attempts: 5, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true, removeOnFail: keepFailed },
  }),
  'lead-erasure': define({
    queue: 'lead-erasure',
    name: 'lead.erase',
    payload: LeadErasurePayload,
    jobId: (p) => `erasure-${p.businessId}-${p.leadId}`,
    // Retried until done (contract §13): 15 attempts doubling from 2 s span about 18 hours.
    options: { attempts: 15, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: true, removeOnFail: keepFailed },
  }),
} as const

export type JobKind = keyof typeof JOBS
export type JobPayload<K extends JobKind> = Static<(typeof JOBS)[K]['payload']>

/**
 * What the exhaustion of a job means for the data it works on, for the queues whose data lives
 * in PostgreSQL (docs/operations.md "Exhausted jobs"). Each capability that owns such a queue provides these;
 * the worker calls `exhausted` when a job fails for good, `cli queues retry` calls `reopen` before
 * running the job again and `cli queues drop` calls `abandon`. Each is safe to repeat.
 */
export interface JobDataHooks<K extends JobKind> {
  /**
   * The job failed for good: its data becomes `failed` with a reason (a row already final is left
   * alone). `reason` is the job's last error, for operators; clients may need a plainer one.
   */
  exhausted(deps: { database: Database }, payload: JobPayload<K>, failure: JobFailure): Promise<void>
  /** An operator retries the job: its data goes back to where the job starts from. */
  reopen(deps: { database: Database }, payload: JobPayload<K>): Promise<void>
  /** An operator drops the job: its data stays failed for good (what it kept for a retry may be freed). */
  abandon(deps: { database: Database }, payload: JobPayload<K>): Promise<void>
}

/** How a job failed for good: its last error and how many attempts it made. */
export interface JobFailure {
  reason: string
  attemptsMade: number
}

export type JobDataHooksTable = { [K in JobKind]?: JobDataHooks<K> }

/** A queue's hooks bound to one job's payload. */
export interface BoundJobDataHooks {
  exhausted(deps: { database: Database }, failure: JobFailure): Promise<void>
  reopen(deps: { database: Database }): Promise<void>
  abandon(deps: { database: Database }): Promise<void>
}

/**
 * The hooks of the job's queue bound to its data; undefined when the queue keeps no data in
 * PostgreSQL (lead-ingest, catalogue-reindex) or the data is not the queue's payload (a job added
 * by hand), so there is nothing to mark.
 */
export function dataHooksOf(table: JobDataHooksTable, kind: JobKind, data: unknown): BoundJobDataHooks | undefined {
  const hooks = table[kind] as JobDataHooks<JobKind> | undefined
  if (!hooks || !Value.Check(JOBS[kind].payload, data)) return undefined
  const payload = data as JobPayload<JobKind>
  return {
    exhausted: (deps, failure) => hooks.exhausted(deps, payload as never, failure),
    reopen: (deps) => hooks.reopen(deps, payload as never),
    abandon: (deps) => hooks.abandon(deps, payload as never),
  }
}
