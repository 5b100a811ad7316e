/**
 * Raw HTTP/1.1 over a socket, for answers `fetch` cannot show: a huge declared Content-Length
 * with only the first bytes sent, and whether the server closes the connection afterwards.
 */
import { connect } from 'node:net'

export interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
  /** The server closed the connection (within the wait) after answering. */
  closed: boolean
}

/**
 * Sends `head` (and the first bytes of a body) and reads the answer: until the server closes the
 * connection, or 500 ms after a complete answer (then `closed` is false), or `waitMs` at most.
 */
export function rawRequest(port: number, head: string, bodyStart: string | Uint8Array = '', waitMs = 5000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head)
      if (bodyStart.length) socket.write(bodyStart)
    })
    let out = ''
    let closed = false
    let answered = false
    const finish = () => {
      if (answered) return
      answered = true
      clearTimeout(timer)
      clearTimeout(grace)
      socket.destroy()
      const end = out.indexOf('\r\n\r\n')
      const [statusLine, ...lines] = (end === -1 ? out : out.slice(0, end)).split('\r\n')
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
      const status = Number(statusLine.split(' ')[1])
      if (!status) reject(new Error(`no answer: ${JSON.stringify(out.slice(0, 200))}`))
      else resolve({ status, headers, body: end === -1 ? '' : out.slice(end + 4), closed })
    }
    const timer = setTimeout(finish, waitMs)
    let grace: ReturnType<typeof setTimeout> | undefined
    socket.on('data', (d) => {
      out += d.toString('latin1')
      const end = out.indexOf('\r\n\r\n')
      const length = end === -1 ? NaN : Number(/\r\ncontent-length: *(\d+)/i.exec(out.slice(0, end))?.[1] ?? 0)
      if (end !== -1 && out.length >= end + 4 + length && !grace) grace = setTimeout(finish, 500)
    })
    socket.on('end', () => {
      closed = true
      finish()
    })
    socket.on('close', () => {
      closed = true
      finish()
    })
    socket.on('error', () => finish())
  })
}
