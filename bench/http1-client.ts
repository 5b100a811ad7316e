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
  body: string
}

interface Pending {
  resolve(response: Http1Response): void
  reject(error: Error): void
}

const HEADER_END = Buffer.from('\r\n\r\n')
const CHUNKED_END = Buffer.from('0\r\n\r\n')

export class Http1Connection {
  private buffer: Buffer = Buffer.alloc(0)
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
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk
    const headerEnd = this.buffer.indexOf(HEADER_END)
    if (headerEnd < 0 || !this.pending) return
    const head = this.buffer.subarray(0, headerEnd).toString('latin1')
    const status = Number(head.slice(9, 12))
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
    const bodyStart = headerEnd + HEADER_END.length
    let body: string
    if (length) {
      const end = bodyStart + Number(length[1])
      if (this.buffer.length < end) return
      body = this.buffer.subarray(bodyStart, end).toString()
      this.buffer = this.buffer.subarray(end)
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      const end = this.buffer.indexOf(CHUNKED_END, bodyStart)
      if (end < 0) return
      body = dechunk(this.buffer.subarray(bodyStart, end + CHUNKED_END.length))
      this.buffer = this.buffer.subarray(end + CHUNKED_END.length)
    } else {
      body = ''
      this.buffer = this.buffer.subarray(bodyStart)
    }
    const pending = this.pending
    this.pending = undefined
    if (/\r\nconnection:\s*close/i.test(head)) this.closed = true
    pending.resolve({ status, body })
  }

  private fail(error: Error): void {
    this.closed = true
    const pending = this.pending
    this.pending = undefined
    pending?.reject(error)
  }
}

function dechunk(data: Buffer): string {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at)
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16)
    if (!size) break
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
  return Buffer.concat(parts).toString()
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
