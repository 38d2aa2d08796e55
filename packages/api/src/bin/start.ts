#!/usr/bin/env node
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { layerAllInOne } from "../Server.ts"

// SIGTERM/SIGINT interrupt the main fiber: the server stops accepting, in-flight work finishes or is
// handed back through the cluster, the database stops, and the process exits 0.
Layer.launch(layerAllInOne).pipe(NodeRuntime.runMain)
