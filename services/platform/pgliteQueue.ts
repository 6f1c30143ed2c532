/**
 * pglite-socket serves every connection from ONE PGlite session and queues their protocol messages one message at a
 * time. It keeps a transaction's messages together, but not an extended-protocol exchange (Parse, Bind, Describe,
 * Execute ... Sync), which node-postgres uses for every parameterized query: two connections querying at once
 * interleave, one's Parse replaces the other's unnamed statement, and the other's Bind then fails with "unnamed
 * prepared statement does not exist" or, worse, runs the wrong statement. This replaces the queue's scheduler on the
 * server instance so a connection that started an exchange is served alone until its Sync, as a transaction is.
 * It also keeps going after a failed message (the library's own scheduler stops the whole queue there).
 */
import type { PGLiteSocketServer } from "@electric-sql/pglite-socket"

interface QueuedMessage {
  readonly handlerId: number
  readonly message: Uint8Array
  readonly onData: (data: Uint8Array) => void
  readonly resolve: (bytes: number) => void
  readonly reject: (error: unknown) => void
}

interface QueueInternals {
  queue: Array<QueuedMessage>
  processing: boolean
  lastHandlerId: number | null
  db: {
    isInTransaction: () => boolean
    runExclusive: <A>(f: () => Promise<A>) => Promise<A>
    execProtocolRawStream: (message: Uint8Array, options: { onRawData: (data: Uint8Array) => void }) => Promise<unknown>
  }
  processQueue: () => Promise<void>
}

const SYNC = 0x53 // 'S'
const QUERY = 0x51 // 'Q': a simple query is complete in itself
/** Parse, Bind, Describe, Execute, Close, Flush: an extended-protocol exchange runs until its Sync. */
const EXTENDED = new Set([0x50, 0x42, 0x44, 0x45, 0x43, 0x48])

export const keepProtocolExchangesTogether = (server: PGLiteSocketServer): void => {
  const queue = (server as unknown as { queryQueue?: QueueInternals }).queryQueue
  if (queue === undefined || !Array.isArray(queue.queue) || typeof queue.processQueue !== "function") {
    throw new Error("pglite-socket's query queue is not where this service expects it; check services/platform/pgliteQueue.ts against the installed version")
  }
  let exchangeOwner: number | null = null
  queue.processQueue = async function (this: QueueInternals) {
    if (this.processing || this.queue.length === 0) return
    this.processing = true
    try {
      while (this.queue.length > 0) {
        const owner = this.db.isInTransaction() && this.lastHandlerId !== null ? this.lastHandlerId : exchangeOwner
        const index = owner === null ? 0 : this.queue.findIndex((q) => q.handlerId === owner)
        // The owner's next message has not arrived yet: the others wait, as they do during a transaction.
        if (index === -1) break
        const item = this.queue.splice(index, 1)[0]!
        const type = item.message[0]
        let bytes = 0
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data) => {
                bytes += data.length
                item.onData(data)
              }
            })
          )
        } catch (error) {
          exchangeOwner = null
          item.reject(error)
          continue
        }
        exchangeOwner = type !== undefined && EXTENDED.has(type) ? item.handlerId : type === SYNC || type === QUERY ? null : exchangeOwner
        this.lastHandlerId = item.handlerId
        item.resolve(bytes)
      }
    } finally {
      this.processing = false
    }
  }.bind(queue)
  // A connection that goes away mid-exchange must not hold the others forever.
  const clear = (queue as unknown as { clearQueueForHandler: (id: number) => void }).clearQueueForHandler.bind(queue)
  ;(queue as unknown as { clearQueueForHandler: (id: number) => void }).clearQueueForHandler = (id: number) => {
    if (exchangeOwner === id) exchangeOwner = null
    clear(id)
    void queue.processQueue()
  }
}
