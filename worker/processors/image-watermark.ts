/**
 * image-watermark (contract §5): makes an image's public copy in a worker thread of
 * deps.imagePool and marks the image ready or failed (shared/media/operations.ts, makePublicCopy).
 */
import { UnrecoverableError, type Job } from 'bullmq'
import { Value } from '@sinclair/typebox/value'
import { ImageWatermarkPayload } from '../../shared/platform/jobs'
import { makePublicCopy, type ImageProcessed } from '../../shared/media/operations'
import type { WorkerDeps } from '../deps'

export async function processImageWatermark(deps: WorkerDeps, job: Pick<Job, 'data'>): Promise<ImageProcessed> {
  if (!Value.Check(ImageWatermarkPayload, job.data)) throw new UnrecoverableError('invalid image-watermark payload')
  return makePublicCopy(deps, job.data.imageId)
}
