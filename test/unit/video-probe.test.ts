/** The contract's limits on what ffprobe reports (contract §9.3), and the encode's arguments. */
import { describe, expect, test } from 'bun:test'
import { VideoRejectedError, checkProbe, renditionContentType, transcodeArgs } from '../../shared/media/transcode'

const video = (width: number, height: number, extra: Record<string, unknown> = {}) => ({
  index: 0,
  codec_type: 'video',
  codec_name: 'h264',
  width,
  height,
  ...extra,
})
const rejected = (probe: unknown) => {
  try {
    checkProbe(probe as never)
  } catch (error) {
    expect(error).toBeInstanceOf(VideoRejectedError)
    return (error as Error).message
  }
  throw new Error('not rejected')
}

describe('checkProbe', () => {
  test('a video stream within 15 minutes and 4K passes, in either orientation; audio is found', () => {
    expect(
      checkProbe({ streams: [video(3840, 2160), { index: 1, codec_type: 'audio' }], format: { format_name: 'mov,mp4,m4a,3gp,3g2,mj2', duration: '900.0' } }),
    ).toEqual({ durationS: 900, width: 3840, height: 2160, videoStream: 0, audioStream: 1, format: 'mov,mp4,m4a,3gp,3g2,mj2' })
    expect(checkProbe({ streams: [video(2160, 4096)], format: { duration: '1' } }).audioStream).toBeNull()
  })

  test('a cover picture is not the video stream', () => {
    expect(rejected({ streams: [video(600, 600, { disposition: { attached_pic: 1 } }), { index: 1, codec_type: 'audio' }], format: { duration: '3' } })).toBe(
      'The file has no video stream',
    )
    expect(
      checkProbe({ streams: [video(600, 600, { disposition: { attached_pic: 1 } }), { ...video(1280, 720), index: 2 }], format: { duration: '3' } })
        .videoStream,
    ).toBe(2)
  })

  test('over 15 minutes, over 4K, no video: refused with the reason', () => {
    expect(rejected({ streams: [video(640, 360)], format: { duration: '1200' } })).toBe('The video lasts 20 min 0 s; the limit is 15 minutes')
    expect(rejected({ streams: [video(7680, 4320)], format: { duration: '1' } })).toBe('The video is 7680×4320 pixels; the limit is 4K (4096×2160)')
    expect(rejected({ streams: [video(4096, 2304)], format: { duration: '1' } })).toContain('the limit is 4K')
    expect(rejected({ streams: [{ index: 0, codec_type: 'audio' }], format: { duration: '3' } })).toBe('The file has no video stream')
    expect(rejected({})).toBe('The file has no video stream')
  })

  test('an unknown duration is allowed (the encode is capped and checked after)', () => {
    const probe = checkProbe({ streams: [video(640, 360)], format: {} })
    expect(probe.durationS).toBeNull()
    expect(transcodeArgs('in', 'out', probe)).toContain('-t')
  })
})

describe('the encode', () => {
  test('only the file protocol and the MP4/QuickTime and Matroska/WebM demuxers read the upload; metadata is dropped; keyframes every 2 s', () => {
    const args = transcodeArgs('/w/original', '/w/out', { videoStream: 0, audioStream: 1, durationS: 10 })
    const at = (flag: string) => args[args.indexOf(flag) + 1]
    expect(at('-protocol_whitelist')).toBe('file')
    expect(at('-format_whitelist')).toBe('mov,mp4,m4a,3gp,3g2,mj2,matroska,webm')
    expect(args.indexOf('-protocol_whitelist')).toBeLessThan(args.indexOf('-i'))
    expect(at('-map_metadata')).toBe('-1')
    expect(at('-c:v')).toBe('libx264')
    expect(at('-c:a')).toBe('aac')
    expect(at('-force_key_frames')).toBe('expr:gte(t,n_forced*2)')
    expect(at('-f')).toBe('tee')
    expect(args.at(-1)).toContain('hls_time=4')
    expect(transcodeArgs('i', 'o', { videoStream: 0, audioStream: null, durationS: 1 })).toContain('-an')
  })

  test('content types of the rendition files', () => {
    expect(['playlist.m3u8', 'seg-000.ts', 'video.mp4', 'poster.jpg', 'x.bin'].map(renditionContentType)).toEqual([
      'application/vnd.apple.mpegurl',
      'video/mp2t',
      'video/mp4',
      'image/jpeg',
      null,
    ])
  })
})
