/**
 * A real SMTP server on loopback (the `smtp-server` package) that keeps every delivered message, for suites that
 * read sign-in codes out of the mail the service sends.
 */
import { SMTPServer } from "smtp-server"

export interface DeliveredMail {
  readonly to: ReadonlyArray<string>
  readonly raw: string
}

export interface Mailbox {
  readonly url: string
  readonly delivered: Array<DeliveredMail>
  /** The code in the latest message to `to` (waits briefly for it to arrive). */
  readonly codeFor: (to: string) => Promise<string>
  readonly close: () => Promise<void>
}

/** The code stands alone on its line in the message text. */
export const codeIn = (raw: string): string | undefined => /^\s+([0-9]{6})\s*$/m.exec(raw.replace(/\r\n/g, "\n"))?.[1]

export const startMailbox = async (): Promise<Mailbox> => {
  const delivered: Array<DeliveredMail> = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        delivered.push({
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()),
          raw: Buffer.concat(chunks).toString("utf8")
        })
        callback()
      })
    }
  })
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve((server.server.address() as { port: number }).port))
  })
  const codeFor = async (to: string) => {
    for (let waited = 0; waited < 5_000; waited += 25) {
      const latest = delivered.filter((mail) => mail.to.includes(to.trim().toLowerCase())).at(-1)
      const code = latest === undefined ? undefined : codeIn(latest.raw)
      if (code !== undefined) return code
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    throw new Error(`no code was mailed to ${to}`)
  }
  return {
    url: `smtp://127.0.0.1:${port}`,
    delivered,
    codeFor,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}
