import { doublePrecision, bigint, index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { businesses } from './businesses'
import { properties } from './properties'

/**
 * A listing's videos (contract §9.3): links to a provider (ready at once) and uploads that the
 * video-transcode worker turns into an HLS rendition, an MP4 and a poster in public storage.
 */
export const propertyVideos = pgTable(
  'property_videos',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    propertyId: integer('property_id')
      .notNull()
      .references(() => properties.id, { onDelete: 'cascade' }),
    source: text('source', { enum: ['link', 'upload'] }).notNull(),
    /** For links: youtube, vimeo or matterport. */
    provider: text('provider'),
    state: text('state', { enum: ['pending', 'processing', 'ready', 'failed'] }).notNull(),
    title: text('title').notNull().default(''),
    position: integer('position').notNull(),
    url: text('url'),
    hlsUrl: text('hls_url'),
    thumbnailUrl: text('thumbnail_url'),
    embedUrl: text('embed_url'),
    durationS: doublePrecision('duration_s'),
    error: text('error'),
    /** Upload: the original in private storage (deleted once ready or failed), its declared type and size. */
    originalKey: text('original_key'),
    contentType: text('content_type'),
    declaredSize: bigint('declared_size', { mode: 'number' }),
    /** Upload: the unguessable public prefix holding the rendition (playlist, segments, MP4, poster). */
    publicPrefix: text('public_prefix'),
    uploadExpiresAt: timestamp('upload_expires_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('property_videos_property_idx').on(t.propertyId, t.position)],
)

export type PropertyVideoRow = typeof propertyVideos.$inferSelect
