/**
 * A server for the sign-in suites: its own test database, a real SMTP server it mails codes to, and a JSON client.
 * Client addresses come from X-Forwarded-For (TRUST_PROXY), so each test can sign up from an address of its own.
 */
import { makeClient } from "./accounts.ts"
import { createMigratedDatabase, type TestDatabase } from "./database.ts"
import { type Mailbox, startMailbox } from "./mailbox.ts"
import { startTestServer, type TestServer } from "./server.ts"

export interface AccountServer {
  readonly database: TestDatabase
  readonly mailbox: Mailbox
  readonly server: TestServer
  readonly client: ReturnType<typeof makeClient>
  readonly close: () => Promise<void>
}

export const startAccountServer = async (env: Record<string, string> = {}): Promise<AccountServer> => {
  const database = await createMigratedDatabase()
  const mailbox = await startMailbox()
  const server = await startTestServer({
    DATABASE_URL: database.url,
    SMTP_URL: mailbox.url,
    MAIL_FROM: "Compute Exchange <no-reply@example.com>",
    TRUST_PROXY: "true",
    ...env
  })
  return {
    database,
    mailbox,
    server,
    client: makeClient(server.baseUrl),
    close: async () => {
      await server.close()
      await mailbox.close()
      await database.close()
    }
  }
}
