/**
 * Image worker thread: runs the sharp transform off the main event loop, so in the
 * single-process default the API and the other queues keep answering while photos are encoded.
 */
import sharp from 'sharp'
import { ImageRejectedError, transformImage } from './transform'
import type { ThreadRequest, ThreadResponse } from './pool'

declare const self: Worker

// Every photo is decoded once: libvips' operation cache would only hold memory.
sharp.cache(false)

self.onmessage = async (event: MessageEvent<ThreadRequest>) => {
  const { id, input, maxPixels, watermark } = event.data
  let response: ThreadResponse
  try {
    const result = await transformImage(new Uint8Array(input), { maxPixels, watermark })
    // sharp's output lives in memory libvips owns, which cannot be transferred: one copy (≈1 MB).
    response = { id, ok: true, output: result.data.slice().buffer as ArrayBuffer, width: result.width, height: result.height }
    self.postMessage(response, [response.output])
    return
  } catch (error) {
    response =
      error instanceof ImageRejectedError
        ? { id, ok: false, rejected: true, message: error.message }
        : { id, ok: false, rejected: false, message: (error as Error)?.message ?? String(error) }
  }
  self.postMessage(response)
}
