/**
 * Exhausted jobs, the safety net: nothing of an upload stays `processing` for ever even when the
 * worker could not record a job's exhaustion (PostgreSQL down at that moment, a crash) or the job
 * was lost. The media sweep (worker maintenance) queues lost work again and fails work whose job
 * failed for good; a repeated `complete` on such an upload answers the terminal state at once.
 * No worker runs here: the jobs are failed by a stand-in worker that refuses them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { UnrecoverableError, Worker } from 'bullmq'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { recoverMediaJobs } from '../../shared/media/operations'
import { redisConnection } from '../../shared/platform/queues'
import type { QueueName } from '../../shared/platform/queue-names'
import { call, createTestContext, eventually, seedBusiness, type SeededBusiness, type TestContext } from '../helpers/context'
import { orientedJpeg, uploadFiles } from '../helpers/images'
import { createPublished } from '../helpers/properties'

let ctx: TestContext
let biz: SeededBusiness
let dataDir: string
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'exhausted-media-sweep-'))
  ctx = await createTestContext({ DATA_DIR: dataDir })
  biz = await seedBusiness(ctx)
})
afterAll(async () => {
  await ctx?.close()
  await rm(dataDir, { recursive: true, force: true })
})

const deps = () => ({ database: ctx.deps.database, queues: ctx.deps.queues, logger: ctx.deps.logger })

/** Fails the queue's waiting jobs for good, as a worker that died before recording it would leave them. */
async function failWaitingJobs(queue: QueueName, ids: string[]): Promise<void> {
  const connection = redisConnection(ctx.config.redisUrl, 'worker')
  const worker = new Worker(
    queue,
    async () => {
      throw new UnrecoverableError('worker lost its database connection')
    },
    { connection, prefix: ctx.config.queuePrefix },
  )
  try {
    await eventually(
      async () => {
        for (const id of ids) if ((await (await ctx.deps.queues.get(queue).getJob(id))?.getState()) !== 'failed') return false
        return true
      },
      { what: `${ids.join(', ')} failed` },
    )
  } finally {
    await worker.close()
    connection.disconnect()
  }
}

const age = (table: 'upload_sessions' | 'property_images', column: 'completed_at' | 'created_at', id: string) =>
  ctx.deps.database.db.execute(sql`update ${sql.raw(table)} set ${sql.raw(column)} = now() - interval '1 hour' where id = ${id}`)

describe('media sweep', () => {
  test('an upload whose job is lost is queued again; one whose job failed unrecorded is failed, and complete answers it', async () => {
    const propertyId = await createPublished(ctx, biz.apiKey)
    const lost = await uploadFiles(ctx, biz.apiKey, propertyId, [{ filename: 'a.jpg', content_type: 'image/jpeg', body: await orientedJpeg() }])
    const stuck = await uploadFiles(ctx, biz.apiKey, propertyId, [{ filename: 'b.jpg', content_type: 'image/jpeg', body: await orientedJpeg() }])
    const q = ctx.deps.queues.get('upload-complete')
    await (await q.getJob(`upload-${lost.uploadId}`))!.remove()
    await failWaitingJobs('upload-complete', [`upload-${stuck.uploadId}`])
    await age('upload_sessions', 'completed_at', lost.uploadId)
    await age('upload_sessions', 'completed_at', stuck.uploadId)

    // Young work is left alone: its job may still be running.
    const fresh = await uploadFiles(ctx, biz.apiKey, propertyId, [{ filename: 'c.jpg', content_type: 'image/jpeg', body: await orientedJpeg() }])
    await (await q.getJob(`upload-${fresh.uploadId}`))!.remove()

    const result = await recoverMediaJobs(deps())
    expect(result.requeued).toBeGreaterThanOrEqual(1)
    expect(result.failed).toBeGreaterThanOrEqual(1)
    expect(await (await q.getJob(`upload-${lost.uploadId}`))?.getState()).toBe('waiting')
    expect(await q.getJob(`upload-${fresh.uploadId}`)).toBeUndefined()
    const failed = await call(ctx.app, 'GET', `/v1/properties/${propertyId}/images/uploads/${stuck.uploadId}`, { key: biz.apiKey })
    expect(failed.body.data.state).toBe('failed')
    expect(failed.body.data.files[0].error).toMatch(/could not be checked/)
  })

  test('complete on a processing upload whose job failed unrecorded answers `failed`, not a job that never runs', async () => {
    const propertyId = await createPublished(ctx, biz.apiKey)
    const { uploadId } = await uploadFiles(ctx, biz.apiKey, propertyId, [{ filename: 'a.jpg', content_type: 'image/jpeg', body: await orientedJpeg() }])
    await failWaitingJobs('upload-complete', [`upload-${uploadId}`])
    const again = await call(ctx.app, 'POST', `/v1/properties/${propertyId}/images/uploads/${uploadId}/complete`, { key: biz.apiKey })
    expect(again.status).toBe(202)
    expect(again.body.state).toBe('failed')
    const status = await call(ctx.app, 'GET', `/v1/properties/${propertyId}/images/uploads/${uploadId}`, { key: biz.apiKey })
    expect(status.body.data.files[0]).toMatchObject({ state: 'failed', error: expect.stringMatching(/could not be checked \(1 attempt failed\)/) })
  })

  test('an image whose job failed unrecorded is failed with a reason; one whose job is lost is queued again', async () => {
    const propertyId = await createPublished(ctx, biz.apiKey)
    const insert = async (position: number) => {
      const [row] = await ctx.deps.database.db.execute<{ id: string }>(sql`
        insert into property_images (business_id, property_id, original_key, position, is_primary, state, created_at)
        values (${biz.id}, ${propertyId}, ${`orig-${crypto.randomUUID()}`}, ${position}, ${position === 1}, 'processing', now() - interval '1 hour')
        returning id`)
      return row.id
    }
    const lost = await insert(1)
    const stuck = await insert(2)
    await ctx.deps.queues.enqueue('image-watermark', { imageId: stuck })
    await failWaitingJobs('image-watermark', [`image-${stuck}`])
    await recoverMediaJobs(deps())
    expect(await (await ctx.deps.queues.get('image-watermark').getJob(`image-${lost}`))?.getState()).toBe('waiting')
    const rows = [
      ...(await ctx.deps.database.db.execute<{ id: string; state: string; error: string | null }>(
        sql`select id, state, error from property_images where property_id = ${propertyId} order by position`,
      )),
    ]
    expect(rows).toEqual([
      { id: lost, state: 'processing', error: null },
      { id: stuck, state: 'failed', error: expect.stringMatching(/could not be processed/) },
    ])
  })
})
