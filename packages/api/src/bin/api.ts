#!/usr/bin/env node
import { useJemalloc } from "../Allocator.ts"

// before anything is loaded: the process may re-execute itself with jemalloc (Allocator.ts)
useJemalloc()
const { NodeRuntime } = await import("@effect/platform-node")
const { Layer } = await import("effect")
const { layerApiOnly } = await import("../Server.ts")

// HTTP API only (a client of the cluster): needs DATABASE_URL shared with `npm run runner` processes.
Layer.launch(layerApiOnly).pipe(NodeRuntime.runMain)
