import { sql } from 'drizzle-orm'
import { bigint, boolean, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { businesses } from './businesses'
import { properties } from './properties'

/** An upload session (contract §5): short-lived PUT URLs into private storage. */
export const uploadSessions = pgTable(
  'upload_sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    propertyId: integer('property_id')
      .notNull()
      .references(() => properties.id, { onDelete: 'cascade' }),
    state: text('state', { enum: ['pending', 'processing', 'completed', 'failed', 'expired'] })
      .notNull()
      .default('pending'),
    /** `upload`: files PUT by the client; `import`: files fetched by URL (contract §9.2). */
    kind: text('kind', { enum: ['upload', 'import'] })
      .notNull()
      .default('upload'),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('upload_sessions_property_idx').on(t.propertyId), index('upload_sessions_expiry_idx').on(t.state, t.expiresAt)],
)

export const uploadFiles = pgTable(
  'upload_files',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    sessionId: uuid('session_id')
      .notNull()
      .references(() => uploadSessions.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    filename: text('filename').notNull(),
    contentType: text('content_type').notNull(),
    declaredSize: bigint('declared_size', { mode: 'number' }).notNull(),
    /** Key in the private bucket; never leaves the service. */
    originalKey: text('original_key').notNull(),
    state: text('state', { enum: ['pending', 'processing', 'ready', 'failed'] })
      .notNull()
      .default('pending'),
    error: text('error'),
    imageId: uuid('image_id'),
    /** An import's source URL (contract §9.2); null for an uploaded file. */
    sourceUrl: text('source_url'),
    /** `false`: an unmarked public copy (migrated legacy photos, contract §9.2). */
    watermark: boolean('watermark').notNull().default(true),
    title: text('title').notNull().default(''),
    /** When the original of a failed or abandoned file was deleted from private storage. */
    purgedAt: timestamp('purged_at', { withTimezone: true, mode: 'date' }),
    /**
     * Set when the file failed because its job exhausted its retries (not because of what it
     * holds): its original is kept for `cli queues retry` until an operator retries or drops the job.
     */
    exhaustedAt: timestamp('exhausted_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('upload_files_session_idx').on(t.sessionId, t.position)],
)

/** A property's image; public once `publicUrl` is set by the watermark worker. */
export const propertyImages = pgTable(
  'property_images',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    propertyId: integer('property_id')
      .notNull()
      .references(() => properties.id, { onDelete: 'cascade' }),
    uploadFileId: uuid('upload_file_id').references(() => uploadFiles.id, { onDelete: 'set null' }),
    originalKey: text('original_key').notNull(),
    publicKey: text('public_key'),
    publicUrl: text('public_url'),
    position: integer('position').notNull(),
    isPrimary: boolean('is_primary').notNull().default(false),
    title: text('title').notNull().default(''),
    width: integer('width'),
    height: integer('height'),
    /** Whether the public copy carries the business's watermark (contract §9.1). */
    watermarked: boolean('watermarked').notNull().default(true),
    state: text('state', { enum: ['processing', 'ready', 'failed'] })
      .notNull()
      .default('processing'),
    /** When failed: why (refused by the transform, or its job exhausted its retries). */
    error: text('error'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    index('property_images_property_idx').on(t.propertyId, t.position),
    // One image per uploaded file: a re-run of upload-complete inserts nothing new.
    uniqueIndex('property_images_upload_file_uq').on(t.uploadFileId),
    // The media sweep (worker maintenance) looks for images processing too long without a job.
    index('property_images_processing_idx').on(t.createdAt).where(sql`${t.state} = 'processing'`),
  ],
)
