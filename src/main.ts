/**
 * `npm start`: the whole service on the configured (or embedded) dependencies, until SIGTERM/SIGINT.
 */
import { launchService } from "./launch.ts"
import { MainLive } from "../layers/Main.ts"

launchService(MainLive)
