/**
 * The video rendition (contract §9.3) with the real ffmpeg and ffprobe, run with Bun.spawn: a
 * probe (a real video stream, at most 15 minutes, at most 4K), then ONE encode written twice by
 * ffmpeg's tee muxer — an MP4 (faststart) and an HLS rendition (MPEG-TS segments of 4 s, never
 * more than 6) — H.264/AAC, long edge ≤ 1280 px (never enlarged), without the original's metadata
 * or chapters; then a JPEG poster taken from the MP4. Untrusted files are opened with only the
 * `file` protocol and the MP4/QuickTime and Matroska/WebM demuxers, so a "video" that is really a
 * playlist cannot make ffmpeg read other files or the network. Every run is bounded in time.
 */
import { spawn } from 'bun'

/** The file itself is unusable (not a video, too long, too large, undecodable): `failed` with this reason, never retried. */
export class VideoRejectedError extends Error {
  override name = 'VideoRejectedError'
}

export const MAX_DURATION_S = 15 * 60
/** 4K: DCI 4096×2160 and UHD 3840×2160, either orientation. */
export const MAX_LONG_EDGE = 4096
export const MAX_SHORT_EDGE = 2160
export const OUTPUT_LONG_EDGE = 1280
/** HLS target: keyframes every 2 s make every segment 4 s (the last shorter), within the contract's 6 s. */
export const HLS_SEGMENT_S = 4
const KEYFRAME_EVERY_S = 2

/** File names of a rendition inside its directory (and under its public prefix). */
export const RENDITION = { playlist: 'playlist.m3u8', mp4: 'video.mp4', poster: 'poster.jpg', segmentPattern: 'seg-%03d.ts' } as const
export const SEGMENT_RE = /^seg-\d{3,5}\.ts$/

/** Content types of the rendition's files, by name (storage and `/cdn/*`). */
export function renditionContentType(name: string): string | null {
  if (name.endsWith('.m3u8')) return 'application/vnd.apple.mpegurl'
  if (name.endsWith('.ts')) return 'video/mp2t'
  if (name.endsWith('.mp4')) return 'video/mp4'
  if (name.endsWith('.jpg')) return 'image/jpeg'
  return null
}

/** Demuxers an upload may be read with: video/mp4 and video/quicktime (mov family), video/webm (matroska). */
const INPUT_FORMATS = 'mov,mp4,m4a,3gp,3g2,mj2,matroska,webm'
const SAFE_INPUT = ['-protocol_whitelist', 'file', '-format_whitelist', INPUT_FORMATS]

export interface ProbeResult {
  /** Seconds; null when the container does not say (some WebM recordings): the encode is then capped. */
  durationS: number | null
  width: number
  height: number
  /** Stream index of the video to encode (cover-art pictures skipped). */
  videoStream: number
  audioStream: number | null
  format: string
}

interface RunResult {
  code: number | null
  signal: string | null
  timedOut: boolean
  stdout: string
  stderr: string
}

const TAIL = 4000

/** Runs a tool with a time bound; stdout is kept whole (probe JSON), stderr's tail for logs. */
async function runTool(cmd: string[], timeoutMs: number, options: { stdout?: boolean } = {}): Promise<RunResult> {
  const proc = spawn(cmd, { stdin: 'ignore', stdout: options.stdout ? 'pipe' : 'ignore', stderr: 'pipe' })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    proc.kill('SIGKILL')
  }, timeoutMs)
  try {
    const [stdout, stderr] = await Promise.all([
      options.stdout ? new Response(proc.stdout as ReadableStream).text() : Promise.resolve(''),
      new Response(proc.stderr as ReadableStream).text(),
    ])
    const code = await proc.exited
    return { code: proc.signalCode ? null : code, signal: proc.signalCode ? String(proc.signalCode) : null, timedOut, stdout, stderr: stderr.slice(-TAIL) }
  } finally {
    clearTimeout(timer)
  }
}

/** ffmpeg or ffprobe failed for a reason that is not the file's (killed, timed out, missing): retried. */
export class ToolError extends Error {
  override name = 'ToolError'
  constructor(
    readonly tool: string,
    readonly result: Pick<RunResult, 'code' | 'signal' | 'timedOut' | 'stderr'>,
  ) {
    const how = result.timedOut ? 'timed out' : result.signal ? `was killed (${result.signal})` : `exited with ${result.code}`
    super(`${tool} ${how}: ${result.stderr.trim().split('\n').slice(-3).join(' | ')}`)
  }
}

interface FfprobeStream {
  index: number
  codec_type?: string
  codec_name?: string
  width?: number
  height?: number
  duration?: string
  disposition?: { attached_pic?: number }
}
interface FfprobeOutput {
  streams?: FfprobeStream[]
  format?: { format_name?: string; duration?: string }
}

const PROBE_TIMEOUT_MS = 30_000

/** ffprobe's view of the file, or VideoRejectedError saying why it is not a usable video. */
export async function probeVideo(path: string): Promise<ProbeResult> {
  const result = await runTool(
    ['ffprobe', '-v', 'error', '-hide_banner', ...SAFE_INPUT, '-print_format', 'json', '-show_format', '-show_streams', path],
    PROBE_TIMEOUT_MS,
    { stdout: true },
  )
  if (result.timedOut || result.signal) throw new ToolError('ffprobe', result)
  if (result.code !== 0) throw new VideoRejectedError('The file is not a readable MP4, QuickTime or WebM video')
  let parsed: FfprobeOutput
  try {
    parsed = JSON.parse(result.stdout) as FfprobeOutput
  } catch {
    throw new VideoRejectedError('The file is not a readable MP4, QuickTime or WebM video')
  }
  return checkProbe(parsed)
}

const seconds = (text: string | undefined) => {
  const n = Number(text)
  return text !== undefined && Number.isFinite(n) && n > 0 ? n : null
}

/** The contract's limits on what ffprobe found (pure; unit-tested). */
export function checkProbe(probe: FfprobeOutput): ProbeResult {
  const streams = probe.streams ?? []
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic && (s.width ?? 0) > 0 && (s.height ?? 0) > 0)
  if (!video) throw new VideoRejectedError('The file has no video stream')
  const audio = streams.find((s) => s.codec_type === 'audio')
  // Both above 0: the stream was chosen for it.
  const width = video.width ?? 0
  const height = video.height ?? 0
  if (Math.max(width, height) > MAX_LONG_EDGE || Math.min(width, height) > MAX_SHORT_EDGE) {
    throw new VideoRejectedError(`The video is ${width}×${height} pixels; the limit is 4K (${MAX_LONG_EDGE}×${MAX_SHORT_EDGE})`)
  }
  const durationS = seconds(probe.format?.duration) ?? seconds(video.duration)
  if (durationS !== null && durationS > MAX_DURATION_S) {
    throw new VideoRejectedError(`The video lasts ${formatDuration(durationS)}; the limit is 15 minutes`)
  }
  return { durationS, width, height, videoStream: video.index, audioStream: audio?.index ?? null, format: probe.format?.format_name ?? '' }
}

const formatDuration = (s: number) => `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`

/** The long edge scaled to at most OUTPUT_LONG_EDGE, never enlarged, both sides even (H.264 4:2:0). */
const SCALE = `scale=w='if(gte(iw,ih),trunc(min(${OUTPUT_LONG_EDGE},iw)/2)*2,-2)':h='if(gte(iw,ih),-2,trunc(min(${OUTPUT_LONG_EDGE},ih)/2)*2)',setsar=1`

/**
 * The encode's arguments: one H.264/AAC encode, written as MP4 and HLS by the tee muxer. The
 * benchmark runs exactly these against a bare ffmpeg, so any overhead it measures is ours.
 */
export function transcodeArgs(input: string, outDir: string, probe: Pick<ProbeResult, 'videoStream' | 'audioStream' | 'durationS'>): string[] {
  const audio = probe.audioStream === null ? ['-an'] : ['-map', `0:${probe.audioStream}`, '-c:a', 'aac', '-b:a', '128k', '-ac', '2']
  // A container that does not say how long it is: stop just past the limit (checked after).
  const cap = probe.durationS === null ? ['-t', String(MAX_DURATION_S + 1)] : []
  const hls = [
    'f=hls',
    `hls_time=${HLS_SEGMENT_S}`,
    'hls_playlist_type=vod',
    'hls_segment_type=mpegts',
    `hls_segment_filename=${outDir}/${RENDITION.segmentPattern}`,
  ]
  const tee = [`[f=mp4:movflags=+faststart]${outDir}/${RENDITION.mp4}`, `[${hls.join(':')}]${outDir}/${RENDITION.playlist}`].join('|')
  return [
    'ffmpeg',
    '-nostdin',
    '-hide_banner',
    '-v',
    'error',
    '-y',
    ...SAFE_INPUT,
    '-i',
    input,
    ...cap,
    '-map',
    `0:${probe.videoStream}`,
    ...audio,
    // No metadata (title, location, device, dates) and no chapters reach the public files.
    '-map_metadata',
    '-1',
    '-map_chapters',
    '-1',
    '-sn',
    '-dn',
    '-vf',
    SCALE,
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '23',
    '-profile:v',
    'high',
    '-pix_fmt',
    'yuv420p',
    '-force_key_frames',
    `expr:gte(t,n_forced*${KEYFRAME_EVERY_S})`,
    '-f',
    'tee',
    tee,
  ]
}

/** The poster: one frame of the MP4, as JPEG, without metadata. */
export function posterArgs(mp4: string, poster: string, atS: number): string[] {
  return [
    'ffmpeg',
    '-nostdin',
    '-hide_banner',
    '-v',
    'error',
    '-y',
    '-ss',
    atS.toFixed(2),
    '-i',
    mp4,
    '-frames:v',
    '1',
    '-map_metadata',
    '-1',
    '-q:v',
    '3',
    poster,
  ]
}

/** Bound of the encode: generous for slow machines, but never a hung worker. */
export const transcodeTimeoutMs = (durationS: number | null) => 10 * 60_000 + 4 * 1000 * (durationS ?? MAX_DURATION_S)

export interface Rendition {
  durationS: number
  width: number
  height: number
}

/**
 * Encodes `input` into `outDir` (which must exist and be empty) and writes the poster. Throws
 * VideoRejectedError when the file turns out undecodable or truncated, ToolError when ffmpeg was
 * killed or timed out (retried).
 */
export async function transcode(input: string, outDir: string, probe: ProbeResult): Promise<Rendition> {
  const encode = await runTool(transcodeArgs(input, outDir, probe), transcodeTimeoutMs(probe.durationS))
  if (encode.timedOut || encode.signal) throw new ToolError('ffmpeg', encode)
  // The probe passed, so these bytes are a video ffmpeg could open: a failure now is in the data
  // (corrupt or truncated), and would fail the same way on every retry.
  if (encode.code !== 0) throw new VideoRejectedError('The video could not be decoded (corrupt or truncated file)')
  const out = await probeOutput(`${outDir}/${RENDITION.mp4}`)
  if (out.durationS > MAX_DURATION_S + 0.5) throw new VideoRejectedError('The video lasts more than 15 minutes; the limit is 15 minutes')
  // A file cut short decodes up to the cut without an error: compare with what the container promised.
  if (probe.durationS !== null && out.durationS < probe.durationS * 0.9 - 1) {
    throw new VideoRejectedError(`The video is truncated or corrupt (${out.durationS.toFixed(1)} s of ${probe.durationS.toFixed(1)} s could be decoded)`)
  }
  const poster = await runTool(posterArgs(`${outDir}/${RENDITION.mp4}`, `${outDir}/${RENDITION.poster}`, Math.min(1, out.durationS / 2)), 60_000)
  if (poster.code !== 0) throw new ToolError('ffmpeg (poster)', poster)
  return out
}

/** Our own output: trusted, read with the default demuxers. */
async function probeOutput(path: string): Promise<Rendition> {
  const result = await runTool(['ffprobe', '-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path], PROBE_TIMEOUT_MS, { stdout: true })
  if (result.code !== 0) throw new ToolError('ffprobe (output)', result)
  const parsed = JSON.parse(result.stdout) as FfprobeOutput
  const video = parsed.streams?.find((s) => s.codec_type === 'video')
  if (!video) throw new VideoRejectedError('The video could not be decoded (corrupt or truncated file)')
  return { durationS: seconds(parsed.format?.duration) ?? 0, width: video.width ?? 0, height: video.height ?? 0 }
}
