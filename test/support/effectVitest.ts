/**
 * Runs before each test file. The test files share one process (vitest.config.ts: `isolate: false`, so the product's
 * modules load once), and @effect/vitest's `layer` binds `it.effect`, `it.scoped` and the rest to its layer on the
 * one `it` object vitest has: a file using the plain `it.scoped` after a file that used `layer` would run inside that
 * layer's runtime (without TestClock, when it excluded the test services). Each file starts from the plain methods.
 */
import { makeMethods } from "@effect/vitest"
import { it } from "vitest"

// Importing @effect/vitest already gave vitest's `it` the `scopedFixtures` its type asks for.
makeMethods(it as Parameters<typeof makeMethods>[0])
