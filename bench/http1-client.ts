/**
 * A minimal keep-alive HTTP/1.1 client for the benches' load generator. `fetch` cost the
 * generator most of a core at 8k req/s on a 2-core box, so the service under test was measured
 * while starved by its own load; this writes a prepared request on a raw socket and reads back
 * the status and body (Content-Length or chunked), nothing more. One request at a time per
 * connection, as a browser or a load balancer without pipelining sends them.
 */
import type { Socket } from 'bun'

export interface Http1Response {
  status: number
  /** The body as UTF-8 text, decoded when read (a check that looks only at the status never pays for it). */
  readonly body: string
}

/** A response whose body is decoded only if asked for: decoding every 85 KB page cost the generator CPU the service under test then lacked. */
function response(status: number, bytes: Buffer): Http1Response {
  return {
    status,
    get body() {
      return bytes.toString()
    },
  }
}

/** What the headers of the response being read said. */
interface Head {
  status: number
  bodyStart: number
  /** Where the body ends (Content-Length, or no body), or undefined when chunked. */
  end?: number
  close: boolean
}

interface Pending {
  resolve(response: Http1Response): void
  reject(error: Error): void
}

const HEADER_END = Buffer.from('\r\n\r\n')
const CHUNKED_END = Buffer.from('0\r\n\r\n')

export class Http1Connection {
  /** Bytes received and not yet consumed by a response, and how many. */
  private chunks: Buffer[] = []
  private bytesHeld = 0
  private head: Head | undefined
  private pending: Pending | undefined
  private unsent: Buffer | undefined
  private closed = false

  private constructor(private socket: Socket<Http1Connection>) {}

  static open(hostname: string, port: number): Promise<Http1Connection> {
    return new Promise((resolve, reject) => {
      Bun.connect<Http1Connection>({
        hostname,
        port,
        socket: {
          open(socket) {
            socket.data = new Http1Connection(socket)
            resolve(socket.data)
          },
          data: (socket, chunk) => socket.data.received(chunk),
          drain: (socket) => socket.data.flush(),
          close: (socket) => socket.data?.fail(new Error('connection closed')),
          error: (socket, error) => socket.data?.fail(error),
          connectError: (_socket, error) => reject(error),
        },
      }).catch(reject)
    })
  }

  get usable(): boolean {
    return !this.closed
  }

  /** Sends one prepared request (see `prepareRequest`) and resolves with its response. */
  send(request: Buffer): Promise<Http1Response> {
    if (this.closed) return Promise.reject(new Error('connection closed'))
    if (this.pending) return Promise.reject(new Error('a request is already in flight on this connection'))
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject }
      this.unsent = request
      this.flush()
    })
  }

  close(): void {
    this.closed = true
    this.socket.end()
  }

  private flush(): void {
    if (!this.unsent) return
    const written = this.socket.write(this.unsent)
    this.unsent = written < this.unsent.length ? this.unsent.subarray(Math.max(0, written)) : undefined
  }

  private received(chunk: Buffer): void {
    this.chunks.push(chunk)
    this.bytesHeld += chunk.length
    if (!this.pending) return
    // Bytes are joined only when a response may be complete: a page arrives in several reads.
    if (this.head?.end !== undefined && this.bytesHeld < this.head.end) return
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)]
    const buffer = this.chunks[0]
    if (!this.head) {
      const headerEnd = buffer.indexOf(HEADER_END)
      if (headerEnd < 0) return
      const text = buffer.subarray(0, headerEnd).toString('latin1')
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(text)
      const bodyStart = headerEnd + HEADER_END.length
      const chunked = !length && /\r\ntransfer-encoding:\s*chunked/i.test(text)
      this.head = {
        status: Number(text.slice(9, 12)),
        bodyStart,
        end: length ? bodyStart + Number(length[1]) : chunked ? undefined : bodyStart,
        close: /\r\nconnection:\s*close/i.test(text),
      }
    }
    const head = this.head
    let body: Buffer
    let rest: Buffer
    if (head.end !== undefined) {
      if (buffer.length < head.end) return
      body = buffer.subarray(head.bodyStart, head.end)
      rest = buffer.subarray(head.end)
    } else {
      const end = buffer.indexOf(CHUNKED_END, head.bodyStart)
      if (end < 0) return
      body = dechunk(buffer.subarray(head.bodyStart, end + CHUNKED_END.length))
      rest = buffer.subarray(end + CHUNKED_END.length)
    }
    this.chunks = rest.length ? [rest] : []
    this.bytesHeld = rest.length
    this.head = undefined
    const pending = this.pending
    this.pending = undefined
    if (head.close) this.closed = true
    pending.resolve(response(head.status, body))
  }

  private fail(error: Error): void {
    this.closed = true
    const pending = this.pending
    this.pending = undefined
    pending?.reject(error)
  }
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at)
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16)
    if (!size) break
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
  return Buffer.concat(parts)
}

/** The bytes of one request: `url`'s path, the headers given, the body with its length. */
export function prepareRequest(method: string, url: URL, headers: Record<string, string>, body: string): Buffer {
  const bytes = Buffer.from(body)
  let head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`
  head += `content-length: ${bytes.length}\r\n\r\n`
  return Buffer.concat([Buffer.from(head, 'latin1'), bytes])
}

/** Idle keep-alive connections to one server; a new one is opened when none is idle. */
export class Http1Pool {
  private idle: Http1Connection[] = []
  private all = new Set<Http1Connection>()

  constructor(private readonly url: URL) {}

  async send(request: Buffer): Promise<Http1Response> {
    let connection = this.idle.pop()
    while (connection && !connection.usable) connection = this.idle.pop()
    if (!connection) {
      connection = await Http1Connection.open(this.url.hostname, Number(this.url.port))
      this.all.add(connection)
    }
    const response = await connection.send(request)
    if (connection.usable) this.idle.push(connection)
    else this.all.delete(connection)
    return response
  }

  close(): void {
    for (const connection of this.all) connection.close()
    this.all.clear()
    this.idle = []
  }
}
