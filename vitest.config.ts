import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "test/web/**/*.test.tsx"],
    globalSetup: ["test/support/globalSetup.ts"],
    setupFiles: ["test/support/effectVitest.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The files share one process, so the product's modules are loaded once rather than once per file (collection
    // took 250 s of a 1,480 s run). Every suite starts and closes what it uses; test/support/effectVitest.ts resets
    // the one piece of module state @effect/vitest shares between files.
    isolate: false,
    // Two files at a time on the 2-core machine: most of a suite's time is waiting (a service's start, a browser, a
    // database), which the other worker fills (vitest's default here would be one worker: cores - 1).
    maxWorkers: 2,
    minWorkers: 1,
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
