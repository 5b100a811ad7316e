/**
 * The job catalog (architecture.md "Queues", conventions §6): per queue its job name, payload
 * schema, job-id rule and default options. `enqueue()` in queues.ts is the only producer and
 * every processor validates its payload against the schema here.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { JobsOptions } from 'bullmq'
import type { QueueName } from './queue-names'

/** One accepted rental lead, ready to insert (shared/ingest.ts builds it; every column is explicit). */
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

interface JobDefinition<S extends TSchema> {
  queue: QueueName
  /** `domain.verb` (conventions §12). */
  name: string
  payload: S
  /** BullMQ job id from the business key, so a double enqueue is one job; undefined → random. */
  jobId: (payload: Static<S>) => string | undefined
  options: JobsOptions
}

const define = <S extends TSchema>(d: JobDefinition<S>) => d

// Retention: completed jobs are kept briefly for `cli queues` and debugging; failed ones
// longer so an operator can inspect and retry them (they are never the only copy of data).
const keepCompleted = { age: 3600, count: 1000 }
const keepFailed = { age: 7 * 24 * 3600 }

export const JOBS = {
  'lead-ingest': define({
    queue: 'lead-ingest',
    name: 'lead.ingest',
    payload: LeadIngestPayload,
    // De-duplication is the database's unique constraint (architecture.md), not the job id.
    jobId: () => undefined,
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
} as const

export type JobKind = keyof typeof JOBS
export type JobPayload<K extends JobKind> = Static<(typeof JOBS)[K]['payload']>
