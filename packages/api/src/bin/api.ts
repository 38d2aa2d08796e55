#!/usr/bin/env node
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { layerApiOnly } from "../Server.ts"

// HTTP API only (a client of the cluster): needs DATABASE_URL shared with `npm run runner` processes.
Layer.launch(layerApiOnly).pipe(NodeRuntime.runMain)
