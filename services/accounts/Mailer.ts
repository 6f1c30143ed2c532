/**
 * Outgoing mail (DESIGN section 11). With `SMTP_URL` and `MAIL_FROM`, through nodemailer to that server; without them
 * (local runs) the message is kept in `mail_outbox` and its code logged at INFO, so `npm start` users can sign in
 * without a mail server. The outbox then holds codes in the clear: it is for local use only.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Redacted, Schema } from "effect"
import nodemailer from "nodemailer"
import { type CodePurpose, codeInMessage, codeMessage } from "../../domain/accounts/emailCode.ts"
import { ServiceUnavailable } from "../../domain/errors.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"

/** How long the SMTP server may take to accept a connection, greet, and answer each command. */
const SMTP_TIMEOUT_MS = 10_000

export class Mailer extends Effect.Service<Mailer>()("Mailer", {
  scoped: Effect.gen(function* () {
    const { mail } = (yield* AppConfig).identity
    const sql = yield* SqlClient.SqlClient

    const smtp = yield* Option.match(Option.all({ url: mail.smtpUrl, from: mail.from }), {
      onNone: () => Effect.succeed(Option.none()),
      onSome: ({ from, url }) =>
        Effect.acquireRelease(
          Effect.sync(() =>
            nodemailer.createTransport({
              url: Redacted.value(url),
              connectionTimeout: SMTP_TIMEOUT_MS,
              greetingTimeout: SMTP_TIMEOUT_MS,
              socketTimeout: SMTP_TIMEOUT_MS
            })
          ),
          (transport) => Effect.sync(() => transport.close())
        ).pipe(Effect.map((transport) => Option.some({ transport, from })))
    })

    const deliver = (to: string, message: { readonly subject: string; readonly text: string }) =>
      Option.match(smtp, {
        onSome: ({ from, transport }) =>
          Effect.tryPromise({
            try: () => transport.sendMail({ from, to, subject: message.subject, text: message.text }),
            catch: (cause) => cause
          }).pipe(
            Effect.asVoid,
            Effect.catchAll((cause) =>
              Effect.logWarning("mail could not be sent").pipe(
                Effect.annotateLogs({ to, cause: cause instanceof Error ? cause.message : String(cause) }),
                Effect.zipRight(Effect.fail(new ServiceUnavailable({ message: "The mail server is unreachable; retry shortly." })))
              )
            )
          ),
        onNone: () =>
          sql`INSERT INTO mail_outbox ${sql.insert({ toAddress: to, subject: message.subject, bodyText: message.text })}`.pipe(
            Effect.asVoid,
            orDieAtRepository
          )
      })

    /** Sends a one-time code; without SMTP it is written to the outbox and logged for the local user. */
    const sendCode = (to: string, code: string, purpose: CodePurpose): Effect.Effect<void, ServiceUnavailable> =>
      Effect.gen(function* () {
        yield* deliver(to, codeMessage(code, purpose))
        if (Option.isNone(smtp)) {
          yield* Effect.logInfo(`e-mail code for ${to}: ${code} (no SMTP_URL: kept in mail_outbox)`).pipe(
            Effect.annotateLogs({ to, code, purpose })
          )
        }
      })

    /** Any other message (an invitation): over SMTP, or into the outbox when none is configured. */
    const send = (to: string, message: { readonly subject: string; readonly text: string }): Effect.Effect<void, ServiceUnavailable> =>
      deliver(to, message)

    /**
     * The latest code kept in the local outbox for `to` (without SMTP only: with a mail server nothing is kept), for
     * the operator command line of a local run. None when no code was ever kept for the address.
     */
    const keptMail = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ subject: Schema.String, createdAt: Schema.DateFromSelf }),
      execute: (to) => sql`SELECT subject, created_at FROM mail_outbox WHERE to_address = ${to} ORDER BY created_at DESC, id DESC LIMIT 20`
    })
    const latestKeptCode = (to: string) =>
      keptMail(to).pipe(
        orDieAtRepository,
        Effect.map((rows) =>
          Option.firstSomeOf(rows.map((row) => Option.map(Option.fromNullable(codeInMessage(row.subject)), (code) => ({ code, createdAt: row.createdAt }))))
        )
      )

    return { sendCode, send, latestKeptCode, delivers: Option.isSome(smtp) } as const
  })
}) {}
