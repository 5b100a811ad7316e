/**
 * Raw HTTP/1.1 over a socket, for answers `fetch` cannot show: a huge declared Content-Length
 * with only the first bytes sent, and whether the server closes the connection afterwards.
 */
import { connect } from 'node:net'
import { eventually } from './eventually'

export interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
  /** The server closed the connection (with `until: 'closed'`, always: else the call fails). */
  closed: boolean
}

/** The head and as many body bytes as its Content-Length (none without one) have arrived. */
function complete(out: string): boolean {
  const end = out.indexOf('\r\n\r\n')
  if (end === -1) return false
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(out.slice(0, end))?.[1] ?? 0)
  return out.length >= end + 4 + length
}

/**
 * Sends `head` (and the first bytes of a body) and reads the answer: until it is complete
 * (`until: 'answered'`), or until the server closes the connection (`until: 'closed'`), within
 * `timeoutMs`.
 */
export async function rawRequest(
  port: number,
  head: string,
  bodyStart: string | Uint8Array = '',
  options: { until?: 'answered' | 'closed'; timeoutMs?: number } = {},
): Promise<RawAnswer> {
  const until = options.until ?? 'answered'
  let out = ''
  let closed = false
  const socket = connect(port, '127.0.0.1', () => {
    socket.write(head)
    if (bodyStart.length) socket.write(bodyStart)
  })
  socket.on('data', (d) => (out += d.toString('latin1')))
  // A reset after the answer closes the connection as surely as a FIN.
  for (const event of ['end', 'close', 'error']) socket.on(event, () => (closed = true))
  try {
    await eventually(async () => closed || (until === 'answered' && complete(out)), {
      timeoutMs: options.timeoutMs ?? 5000,
      intervalMs: 5,
      what: until === 'closed' ? 'the server to close the connection' : 'a complete answer',
      get detail() {
        return JSON.stringify(out.slice(0, 200))
      },
    })
  } finally {
    socket.destroy()
  }
  const end = out.indexOf('\r\n\r\n')
  const [statusLine, ...lines] = (end === -1 ? out : out.slice(0, end)).split('\r\n')
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
  const status = Number(statusLine.split(' ')[1])
  if (!status) throw new Error(`no answer: ${JSON.stringify(out.slice(0, 200))}`)
  return { status, headers, body: end === -1 ? '' : out.slice(end + 4), closed }
}
