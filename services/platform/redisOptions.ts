/**
 * How this service talks to Redis (REDIS_URL): the client options every Redis user here shares (the rate-limit store,
 * the upstream key pools).
 */
import type { RedisOptions } from "ioredis"

/**
 * ioredis options from a `redis://[user:password@]host[:port][/db]` or `rediss://` URL.
 * Commands are never queued while disconnected (a queued consume would run late, for a request long
 * answered) and never wait more than half a second: a Redis that is down or stuck costs a request
 * almost nothing before it is let through.
 */
export const redisOptionsFromUrl = (raw: string): RedisOptions => {
  const url = new URL(raw)
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new Error(`REDIS_URL must be a redis:// or rediss:// URL, got ${url.protocol}//…`)
  }
  const db = url.pathname.replace(/^\//, "")
  if (db !== "" && !/^[0-9]+$/.test(db)) throw new Error(`REDIS_URL's path must be a database number, got "${db}"`)
  return {
    host: url.hostname === "" ? "127.0.0.1" : url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port === "" ? 6379 : Number(url.port),
    ...(url.username === "" ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === "" ? {} : { password: decodeURIComponent(url.password) }),
    ...(db === "" ? {} : { db: Number(db) }),
    ...(url.protocol === "rediss:" ? { tls: {} } : {}),
    enableOfflineQueue: false,
    commandTimeout: 500,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 1
  }
}

/** ioredis' own reconnection back-off (at most 2 s between attempts), until the service shuts down. */
export const reconnectDelay = (attempt: number) => Math.min(attempt * 50, 2_000)
