#!/usr/bin/env node
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { layerRunnerOnly } from "../Server.ts"

// A cluster runner: hosts API key, render and import entities and executes renders. On SIGTERM it
// hands its shards back; renders in flight are redelivered to another runner.
Layer.launch(layerRunnerOnly).pipe(NodeRuntime.runMain)
