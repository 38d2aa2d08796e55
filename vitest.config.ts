import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // two cores: service processes and renders run beside the test workers (vitest 4 dropped
    // minWorkers: workers start as files need them)
    maxWorkers: 2
  }
})
