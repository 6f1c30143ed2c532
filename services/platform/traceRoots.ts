/**
 * Where a trace may begin (services/platform/Tracing.ts): at a request's `server` span, or at a span carrying
 * `TraceRoot`, a background job's run. Kept apart from the exporter so a service that marks a root does not load it.
 */
import { Context, type Tracer } from "effect"

/** Marks a parentless span as the start of a trace. */
export class TraceRoot extends Context.Tag("cx/TraceRoot")<TraceRoot, true>() {}

/** The span options of a scheduled job's run: its own trace, whatever fiber started it. */
export const jobSpanOptions: Tracer.SpanOptions = { root: true, kind: "internal", context: Context.make(TraceRoot, true) }
