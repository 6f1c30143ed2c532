/** `npm run simulator`: listens on SIMULATOR_PORT (default 8787; 0 picks one) and SIMULATOR_HOST (default 127.0.0.1). */
import { startSimulator } from "./server.ts"

const rawPort = process.env["SIMULATOR_PORT"] ?? "8787"
const port = Number(rawPort)
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`SIMULATOR_PORT must be a port number (0-65535), got ${JSON.stringify(rawPort)}`)
  process.exit(1)
}
const host = process.env["SIMULATOR_HOST"] || "127.0.0.1"

const simulator = await startSimulator({ port, host })
console.log(`simulator ready at ${simulator.url}`)

const stop = () => {
  simulator.close().then(
    () => process.exit(0),
    () => process.exit(1)
  )
}
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
// Run by the service as its embedded vendors: the service holds our stdin open, so its end (the service exited,
// however it died) ends us too and no simulator outlives the service it served.
if (process.env["SIMULATOR_EXIT_WITH_PARENT"] === "1") {
  process.stdin.once("end", stop)
  process.stdin.once("close", stop)
  process.stdin.resume()
}
