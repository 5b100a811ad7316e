/**
 * Video fixtures made with the real ffmpeg at test time (nothing binary is committed), and helpers
 * to drive a video upload end to end: create, PUT with the returned headers, complete, poll.
 */
import { expect } from 'bun:test'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { call, eventually, type TestContext } from './context'
import { putUpload } from './images'

let fixtures: Promise<string> | undefined
const fixtureDir = () => (fixtures ??= mkdtemp(join(tmpdir(), 'video-fixtures-')))

export interface VideoSpec {
  seconds: number
  width: number
  height: number
  fps?: number
  audio?: boolean
  /** Container by extension: mp4 (default), mov or webm. */
  format?: 'mp4' | 'mov' | 'webm'
  /** Tags the public copies must not carry. */
  metadata?: Record<string, string>
  /** Encode speed over quality: big or long fixtures are made in a blink. */
  preset?: string
  /** No video stream at all (an audio-only MP4). */
  audioOnly?: boolean
  /** The index (moov) first, so a cut file still probes and only decoding finds the cut. */
  faststart?: boolean
}

/** Writes the video to a temporary file (cached by spec) and returns its bytes. */
export async function makeVideo(spec: VideoSpec): Promise<Uint8Array> {
  const format = spec.format ?? 'mp4'
  const name = `${JSON.stringify(spec).replace(/[^a-z0-9]+/gi, '_')}.${format}`
  const path = join(await fixtureDir(), name)
  if (!(await Bun.file(path).exists())) {
    const fps = spec.fps ?? 25
    const inputs = spec.audioOnly
      ? ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=44100:duration=${spec.seconds}`]
      : [
          '-f',
          'lavfi',
          '-i',
          `testsrc2=size=${spec.width}x${spec.height}:rate=${fps}:duration=${spec.seconds}`,
          ...(spec.audio ? ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=44100:duration=${spec.seconds}`] : []),
        ]
    const codec =
      format === 'webm'
        ? ['-c:v', 'libvpx', '-b:v', '300k', '-deadline', 'realtime', '-cpu-used', '8', ...(spec.audio ? ['-c:a', 'libopus'] : [])]
        : spec.audioOnly
          ? ['-c:a', 'aac']
          : ['-c:v', 'libx264', '-preset', spec.preset ?? 'ultrafast', '-pix_fmt', 'yuv420p', ...(spec.audio ? ['-c:a', 'aac'] : [])]
    const meta = Object.entries(spec.metadata ?? {}).flatMap(([k, v]) => ['-metadata', `${k}=${v}`])
    const mux = spec.faststart ? ['-movflags', '+faststart'] : []
    const proc = Bun.spawn(['ffmpeg', '-v', 'error', '-y', ...inputs, ...codec, ...meta, ...mux, '-shortest', path], { stdout: 'ignore', stderr: 'pipe' })
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
    if (code !== 0) throw new Error(`ffmpeg could not make the fixture ${name}: ${stderr}`)
  }
  return new Uint8Array(await Bun.file(path).arrayBuffer())
}

export const CONTENT_TYPE = { mp4: 'video/mp4', mov: 'video/quicktime', webm: 'video/webm' } as const

/** Creates the upload, PUTs the body (unless null), completes it; returns the video id. */
export async function uploadVideo(
  ctx: TestContext,
  key: string,
  propertyId: number,
  file: { body: Uint8Array | null; contentType?: string; size?: number; title?: string; complete?: boolean },
): Promise<{ videoId: string; putStatus: number; texts: string[] }> {
  const created = await call(ctx.app, 'POST', `/v1/properties/${propertyId}/videos/uploads`, {
    key,
    body: {
      filename: 'recorrido.mp4',
      content_type: file.contentType ?? 'video/mp4',
      size: file.size ?? Math.max(1, file.body?.byteLength ?? 1),
      ...(file.title !== undefined ? { title: file.title } : {}),
    },
  })
  expect(created.status, created.text).toBe(201)
  let putStatus = 0
  if (file.body) {
    const res = await putUpload(ctx, { url: created.body.upload.url, headers: created.body.upload.headers }, file.body)
    await res.arrayBuffer()
    putStatus = res.status
  }
  const texts = [created.text]
  if (file.complete !== false) {
    const completed = await call(ctx.app, 'POST', `/v1/properties/${propertyId}/videos/${created.body.video_id}/complete`, { key })
    expect(completed.status, completed.text).toBe(202)
    texts.push(completed.text)
  }
  return { videoId: created.body.video_id, putStatus, texts }
}

/** Polls the property's video list until the video is ready or failed; returns it. */
export async function waitForVideo(ctx: TestContext, key: string, propertyId: number, videoId: string, timeoutMs = 60_000): Promise<any> {
  let last = ''
  return eventually(
    async () => {
      const res = await call(ctx.app, 'GET', `/v1/properties/${propertyId}/videos`, { key })
      expect(res.status, res.text).toBe(200)
      last = res.text
      const video = res.body.data.find((v: { id: string }) => v.id === videoId)
      return video && (video.state === 'ready' || video.state === 'failed') ? video : null
    },
    {
      timeoutMs,
      intervalMs: 100,
      what: `video ${videoId} to finish`,
      get detail() {
        return last
      },
    },
  )
}

/** ffprobe's view of a public file (fetched first when it is a URL). */
export async function probe(path: string): Promise<any> {
  const proc = Bun.spawn(['ffprobe', '-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path], { stdout: 'pipe', stderr: 'pipe' })
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
  if (code !== 0) throw new Error(`ffprobe failed on ${path}`)
  return JSON.parse(out)
}
