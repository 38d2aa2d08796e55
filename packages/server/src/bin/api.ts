#!/usr/bin/env node
import { tuneMemory } from "../ProcessMemory.ts"
import { sizeThreadPool } from "../ThreadPool.ts"

// before anything is loaded: the process may re-execute itself with jemalloc and a small young
// generation (ProcessMemory.ts), and libuv's pool is sized before its first use (ThreadPool.ts)
tuneMemory()
sizeThreadPool()
const NodeRuntime = await import("@effect/platform-node/NodeRuntime")
const { Layer } = await import("effect")
const { teardown } = await import("../Main.ts")
const { layerApiOnly } = await import("../Server.ts")

// HTTP API only (a client of the cluster): needs DATABASE_URL shared with `npm run runner` processes.
NodeRuntime.runMain(Layer.launch(layerApiOnly), { teardown })
