import { launch } from "@pic2video/cluster/database/EmbeddedPostgres"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import type { TestProject } from "vitest/node"
import { freePort } from "./net.ts"

/**
 * One PostgreSQL server for the whole run: TEST_DATABASE_URL when set (e.g. the machine's server on
 * 127.0.0.1:5432), else an embedded one in a temp dir. Each test file makes its own database on it.
 */
declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string
  }
}

export default async function setup(project: TestProject) {
  const external = process.env.TEST_DATABASE_URL
  if (external !== undefined && external !== "") {
    project.provide("pgAdminUrl", external)
    return
  }
  const base = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-pg-"))
  fs.chmodSync(base, 0o755) // the postgres uid must traverse it when we run as root
  const port = await freePort()
  // `launch` throws with the server's own words when it cannot start (a bare rejection made the run
  // exit 1 with no message at all)
  const server = await launch({
    databaseDir: Path.join(base, "data"),
    port,
    persistent: false,
    initdbFlags: ["--no-sync", "--encoding=UTF8", "--locale=C"],
    postgresFlags: ["-c", "fsync=off", "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=400"]
  }).catch((e: Error) => {
    fs.rmSync(base, { recursive: true, force: true })
    console.error(`test setup: ${e.message}`)
    throw e
  })
  project.provide("pgAdminUrl", `postgres://postgres:postgres@127.0.0.1:${port}/postgres`)
  return async () => {
    await server.stop()
    fs.rmSync(base, { recursive: true, force: true })
  }
}
