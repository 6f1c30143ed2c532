/**
 * Raw HTTP helpers for wire-level checks that fetch cannot make (a body sent while the answer arrives).
 */
import * as Net from "node:net"

export interface RawResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
  /** Body bytes the client had written when the first response byte arrived. */
  readonly bytesSentBeforeResponse: number
}

const parse = (raw: string, bytesSentBeforeResponse: number): RawResponse => {
  const [head = "", ...rest] = raw.split("\r\n\r\n")
  const [statusLine = "", ...lines] = head.split("\r\n")
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const at = line.indexOf(":")
    headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim()
  }
  let body = rest.join("\r\n\r\n")
  if (headers["transfer-encoding"] === "chunked") {
    let decoded = ""
    let cursor = 0
    for (;;) {
      const end = body.indexOf("\r\n", cursor)
      const size = parseInt(body.slice(cursor, end), 16)
      if (!size) break
      decoded += body.slice(end + 2, end + 2 + size)
      cursor = end + 2 + size + 2
    }
    body = decoded
  }
  return { status: Number(statusLine.split(" ")[1]), headers, body, bytesSentBeforeResponse }
}

/**
 * Sends `head` then `totalBytes` of body in chunks, stopping as soon as the server answers.
 * With `chunked`, the body goes in chunked transfer encoding (no Content-Length).
 */
export const sendLargeBody = (options: {
  readonly port: number
  readonly path: string
  readonly totalBytes: number
  readonly chunked: boolean
}): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const socket = Net.connect({ host: "127.0.0.1", port: options.port })
    let sent = 0
    let answered = -1
    let received = ""
    let finished = false
    const finish = () => {
      if (finished) return
      finished = true
      socket.destroy()
      resolve(parse(received, answered))
    }
    socket.on("data", (data) => {
      if (answered < 0) answered = sent
      received += data.toString("utf8")
      const headEnd = received.indexOf("\r\n\r\n")
      if (headEnd >= 0) {
        const lengthMatch = /content-length:\s*(\d+)/i.exec(received.slice(0, headEnd))
        if (lengthMatch && Buffer.byteLength(received.slice(headEnd + 4)) >= Number(lengthMatch[1])) finish()
      }
    })
    socket.on("error", (error) => (answered >= 0 ? finish() : reject(error)))
    socket.on("close", () => (answered >= 0 ? finish() : reject(new Error("closed without an answer"))))
    socket.on("connect", async () => {
      const framing = options.chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${options.totalBytes}`
      socket.write(
        `POST ${options.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`
      )
      const piece = Buffer.alloc(64 * 1024, 0x20)
      while (sent < options.totalBytes && answered < 0 && !socket.destroyed) {
        const size = Math.min(piece.length, options.totalBytes - sent)
        const chunk = piece.subarray(0, size)
        const ok = options.chunked
          ? socket.write(`${size.toString(16)}\r\n`) && socket.write(chunk) && socket.write("\r\n")
          : socket.write(chunk)
        sent += size
        if (!ok) await new Promise((drained) => socket.once("drain", drained))
        await new Promise((tick) => setImmediate(tick))
      }
      if (options.chunked && answered < 0 && !socket.destroyed) socket.write("0\r\n\r\n")
    })
  })
