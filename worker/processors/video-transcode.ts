/**
 * video-transcode (contract §9.3): probes an uploaded video and writes its HLS rendition, MP4 and
 * poster to public storage with ffmpeg (shared/media/videos.ts, processVideoTranscode). A file
 * that is not a usable video ends `failed` inside the operation; what throws here is ffmpeg or
 * storage trouble, retried from the start by whichever worker takes the job next.
 */
import { UnrecoverableError, type Job } from 'bullmq'
import { Value } from '@sinclair/typebox/value'
import { VideoTranscodePayload } from '../../shared/platform/jobs'
import { processVideoTranscode, type VideoProcessed } from '../../shared/media/videos'
import type { WorkerDeps } from '../deps'

export async function processVideo(deps: WorkerDeps, job: Pick<Job, 'data'>): Promise<VideoProcessed> {
  if (!Value.Check(VideoTranscodePayload, job.data)) throw new UnrecoverableError('invalid video-transcode payload')
  return processVideoTranscode(deps, job.data.videoId)
}
