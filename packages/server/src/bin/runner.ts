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
const { layerRunnerOnly } = await import("../Server.ts")

// A cluster runner: hosts API key, render and import entities and executes renders. On SIGTERM it
// hands its shards back; renders in flight are redelivered to another runner.
NodeRuntime.runMain(Layer.launch(layerRunnerOnly), { teardown })
