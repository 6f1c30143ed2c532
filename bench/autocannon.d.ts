/**
 * The part of autocannon's programmatic API the benchmarks use (the package ships no types).
 */
declare module "autocannon" {
  import type { EventEmitter } from "node:events"

  /** One connection (its requests can be changed before they are sent: `setupClient`). */
  export interface Client extends EventEmitter {
    setHeaders(headers: Record<string, string>): void
  }

  export interface Options {
    readonly url: string
    readonly body?: string | Buffer
    /** Called once per connection, as autocannon makes it (not in workers mode). */
    readonly setupClient?: (client: Client) => void
    readonly connections?: number
    readonly duration?: number
    readonly pipelining?: number
    readonly timeout?: number
    readonly headers?: Record<string, string>
    readonly method?: string
  }

  export interface Histogram {
    readonly average: number
    readonly mean: number
    readonly stddev: number
    readonly min: number
    readonly max: number
    readonly total: number
    readonly p50: number
    readonly p90: number
    readonly p97_5: number
    readonly p99: number
  }

  export interface Result {
    readonly url: string
    readonly requests: Histogram
    readonly latency: Histogram
    readonly throughput: Histogram
    readonly duration: number
    readonly errors: number
    readonly timeouts: number
    readonly mismatches: number
    readonly non2xx: number
    readonly "2xx": number
    readonly statusCodeStats: Record<string, { readonly count: number }>
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    on(event: "response", listener: (client: Client, statusCode: number, resBytes: number, responseTime: number) => void): this
    on(event: "reqError", listener: (error: Error) => void): this
    on(event: string, listener: (...args: Array<any>) => void): this
    stop(): void
  }

  function autocannon(options: Options): Instance
  export default autocannon
}
