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
    maxWorkers: 2,
    // vitest 3 let expect.poll's last attempt finish however long it took (a Playwright locator waits
    // for its element); vitest 5 cuts every attempt at the poll's timeout (default 1 s), which failed
    // the portal's sign-in under load. The default below gives a slow attempt the room it had.
    expect: { poll: { timeout: 30_000 } }
  }
})
