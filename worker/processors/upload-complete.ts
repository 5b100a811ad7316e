/**
 * upload-complete (contract §5): checks every file of a completed upload and creates the image
 * rows in upload order (shared/media/operations.ts, processCompletedUpload).
 */
import { UnrecoverableError, type Job } from 'bullmq'
import { Value } from '@sinclair/typebox/value'
import { UploadCompletePayload } from '../../shared/platform/jobs'
import { processCompletedUpload, type UploadProcessed } from '../../shared/media/operations'
import type { WorkerDeps } from '../deps'

export async function processUploadComplete(deps: WorkerDeps, job: Pick<Job, 'data'>): Promise<UploadProcessed> {
  if (!Value.Check(UploadCompletePayload, job.data)) throw new UnrecoverableError('invalid upload-complete payload')
  return processCompletedUpload(deps, job.data.uploadId)
}
