#!/usr/bin/env node
import * as Module from "node:module"
import * as HelpTable from "../HelpTable.ts"
import * as Launch from "../Launch.ts"

/**
 * `p2v` (the package's "bin"; bundled by scripts/build-client.ts). The version and the help are
 * answered without loading the CLI; any other command loads it (Main.ts, in the package bin/cli.js).
 */
void Launch.start(process.argv, HelpTable.load, () => {
  // V8's compilation of the CLI is kept on disk (Node 22.1+, in TMPDIR): later starts skip it
  if (typeof Module.enableCompileCache === "function") Module.enableCompileCache()
  return import("../Main.ts").then((m) => m.main)
})
