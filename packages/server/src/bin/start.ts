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
const { layerAllInOne } = await import("../Server.ts")

// SIGTERM/SIGINT interrupt the main fiber: the server stops accepting, in-flight work finishes or is
// handed back through the cluster, the database stops, and the process exits 0.
NodeRuntime.runMain(Layer.launch(layerAllInOne), { teardown })
