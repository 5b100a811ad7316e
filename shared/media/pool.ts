/**
 * A small pool of image worker threads (IMAGE_THREADS). Jobs queue in order; a thread that
 * dies fails only its own job (as a retryable error) and is replaced.
 */
import { ImageRejectedError, type TransformResult } from './transform'
import type { WatermarkSpec } from './watermark'

export interface ThreadRequest {
  id: number
  input: ArrayBuffer
  maxPixels: number
  watermark: WatermarkSpec | null
}

export type ThreadResponse =
  | { id: number; ok: true; output: ArrayBuffer; width: number; height: number }
  | { id: number; ok: false; rejected: boolean; message: string }

interface Task {
  request: ThreadRequest
  resolve(result: TransformResult): void
  reject(error: Error): void
}

interface Slot {
  worker: Worker
  task: Task | null
}

const THREAD_URL = new URL('./thread.ts', import.meta.url).href

export class ImagePool {
  private slots: Slot[] = []
  private waiting: Task[] = []
  private nextId = 1
  private closed = false

  constructor(readonly size: number) {}

  /** The transform of `transformImage`, in a thread. The input buffer is transferred (emptied). */
  run(input: Uint8Array, options: { maxPixels: number; watermark: WatermarkSpec | null }): Promise<TransformResult> {
    if (this.closed) return Promise.reject(new Error('image pool is closed'))
    const buffer = input.byteOffset === 0 && input.byteLength === input.buffer.byteLength ? (input.buffer as ArrayBuffer) : input.slice().buffer
    return new Promise((resolve, reject) => {
      this.waiting.push({ request: { id: this.nextId++, input: buffer, ...options }, resolve, reject })
      this.dispatch()
    })
  }

  private dispatch(): void {
    for (let task = this.waiting[0]; task; task = this.waiting[0]) {
      let slot = this.slots.find((s) => s.task === null)
      if (!slot && this.slots.length < this.size) slot = this.spawn()
      if (!slot) return
      this.waiting.shift()
      slot.task = task
      try {
        slot.worker.postMessage(task.request, [task.request.input])
      } catch {
        // Memory owned by a native library cannot be transferred: send a copy instead.
        try {
          slot.worker.postMessage(task.request)
        } catch (error) {
          slot.task = null
          task.reject(error as Error)
        }
      }
    }
  }

  private spawn(): Slot {
    const worker = new Worker(THREAD_URL)
    const slot: Slot = { worker, task: null }
    worker.onmessage = (event: MessageEvent<ThreadResponse>) => {
      const task = slot.task
      slot.task = null
      if (task && task.request.id === event.data.id) {
        const r = event.data
        if (r.ok) task.resolve({ data: new Uint8Array(r.output), width: r.width, height: r.height })
        else task.reject(r.rejected ? new ImageRejectedError(r.message) : new Error(`image transform failed: ${r.message}`))
      }
      this.dispatch()
    }
    const replace = (why: string) => {
      const task = slot.task
      slot.task = null
      this.slots = this.slots.filter((s) => s !== slot)
      worker.terminate()
      task?.reject(new Error(`image thread stopped: ${why}`))
      if (!this.closed) this.dispatch()
    }
    worker.onerror = (event) => replace((event as ErrorEvent).message ?? 'error')
    worker.addEventListener('close', () => {
      if (this.slots.includes(slot)) replace('exited')
    })
    // Threads stay referenced until close() (the worker runtime closes the pool at shutdown).
    this.slots.push(slot)
    return slot
  }

  async close(): Promise<void> {
    this.closed = true
    for (const task of this.waiting.splice(0)) task.reject(new Error('image pool is closed'))
    for (const slot of this.slots.splice(0)) {
      slot.task?.reject(new Error('image pool is closed'))
      slot.worker.terminate()
    }
  }
}
