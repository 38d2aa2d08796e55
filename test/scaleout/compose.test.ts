import { spawnSync } from "node:child_process"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"

/**
 * docker-compose.yml is valid as Compose reads it: `docker-compose config` (v1) or `docker compose
 * config` (v2), wherever one of them is installed; skipped otherwise. It also holds to what
 * docs/operations.md says: every container on the host's network (loopback only, no published ports),
 * the object store instead of a shared data volume, and the per-deployment keys required.
 */
const root = Path.resolve(import.meta.dirname, "../..")
const tool = (() => {
  for (const argv of [["docker-compose"], ["docker", "compose"]]) {
    const r = spawnSync(argv[0], [...argv.slice(1), "version"], { encoding: "utf8" })
    if (r.status === 0) return argv
  }
  return undefined
})()

const config = (env: Record<string, string>) => {
  const r = spawnSync(tool![0], [...tool!.slice(1), "config"], {
    cwd: root,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env }
  })
  return { code: r.status, out: r.stdout, err: r.stderr }
}

describe.skipIf(tool === undefined)("docker-compose.yml", () => {
  it("validates, with every service on the host network and no shared data volume", () => {
    const r = config({ API_KEY_HASH_KEY: "a2V5", TOKEN_ENCRYPTION_KEY: "a2V5" })
    expect(r.code, r.err).toBe(0)
    const block = (name: string) => r.out.split(new RegExp(`^  ${name}:$`, "m"))[1].split(/^ {0,2}\S/m)[0]
    const services = ["api", "grafana", "minio", "postgres", "prometheus", "runner-1", "runner-2"]
    for (const s of services) expect(r.out).toMatch(new RegExp(`^  ${s}:$`, "m"))
    expect(r.out.match(/network_mode: host/g)?.length).toBe(services.length)
    expect(r.out).not.toMatch(/^\s+ports:/m)
    expect(r.out).toMatch(/BLOB_STORE_URL: s3:\/\/pic2video/)
    // every process of the service serves /metrics on its own port, which Prometheus scrapes
    for (const [s, port] of [["api", "9464"], ["runner-1", "9465"], ["runner-2", "9466"]]) {
      expect(block(s)).toMatch(new RegExp(`METRICS_PORT: "${port}"`))
    }
    // only the database, the object store and the monitoring keep volumes
    for (const s of ["api", "runner-1", "runner-2"]) expect(block(s)).not.toMatch(/volumes:/)
    // an init as PID 1 reaps the ffmpeg of a runner killed mid-render
    for (const s of ["api", "runner-1", "runner-2"]) expect(block(s)).toMatch(/^\s+init: true$/m)
  })

  it("refuses to run without the keys every process must share", () => {
    const r = config({})
    expect(r.code).not.toBe(0)
    expect(r.err + r.out).toMatch(/API_KEY_HASH_KEY/)
  })
})
