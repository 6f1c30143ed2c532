/**
 * What an upstream adapter's pure parsers fail with (shared by every upstream format): the caller decides what each
 * means for routing (fallback before the first byte, `stream_interrupted` after it). Neither is shown to a client
 * as is; they are internal, so plain Data errors rather than entries of the API error table.
 */
import { Data, Either } from "effect"

/** A reply body or stream payload we cannot decode: not JSON, or not the vendor's documented shape. */
export class UpstreamProtocolError extends Data.TaggedError("UpstreamProtocolError")<{
  readonly message: string
  /** The vendor's status code when its body named one (e.g. an error object where a reply was expected). */
  readonly status?: number | undefined
}> {}

/** The vendor reported an error inside a stream that had started (an `error` object as a chunk). */
export class UpstreamStreamError extends Data.TaggedError("UpstreamStreamError")<{
  readonly message: string
  /** The status the vendor's error object carried, when it carried one. */
  readonly status?: number | undefined
}> {}

/** One stream payload as JSON, or the protocol error naming what it was (`what`: e.g. "Gemini stream chunk"). */
export const parseStreamJson = (text: string, what: string): Either.Either<unknown, UpstreamProtocolError> =>
  Either.try({
    try: (): unknown => JSON.parse(text),
    catch: () => new UpstreamProtocolError({ message: `${what} is not JSON: ${text.slice(0, 200)}` })
  })
