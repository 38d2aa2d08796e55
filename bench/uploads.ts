/**
 * `npm run bench:uploads` — the service's memory under hostile upload load:
 *
 *   The service as `npm start` runs it (`bin/start.ts`, a temp DATA_DIR, its own embedded PostgreSQL,
 *   which is a separate process and not counted; or DATABASE_URL when set). Its resident set is read
 *   from /proc/PID/status (VmRSS) every 50 ms, and VmHWM (the kernel's own peak) at the end.
 *
 *   0. start: RSS when ready, and once quiet after one ordinary upload (sharp, the upload path and the
 *      vision model loaded);
 *   1. uploads: BENCH_ROUNDS (3) rounds of BENCH_UPLOADS (10) concurrent uploads of a photo of just
 *      under 15 MiB (a noisy 24 MP JPEG), each round with 3 uploads of 15 MiB + 1 byte (413);
 *   2. bombs: BENCH_BOMBS (15) concurrent decompression bombs at once, twice: PNGs of 99.9 MP (under
 *      the 100 MP limit, so they are decoded in full) and of 400 MP (over it, refused from the header);
 *   For each of 1 and 2: its start, its peak (the requests and the background work they start) and
 *   its idle-after RSS, read 5 s after the service has gone quiet (under 5 % CPU for 2 s; each stored
 *   photo is looked at by the vision model after its answer).
 *
 * Target: peak ≤ 512 MiB in phases 1 and 2; idle-after each within 10 % of the start value (after the
 * first upload and its inference).
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import sharp from "sharp"
import { maxUploadBytes, pngBomb } from "../test/foundation/photos.ts"
import { freePort, waitFor } from "../test/support/net.ts"

const root = Path.resolve(import.meta.dirname, "..")
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const concurrent = Number(process.env.BENCH_UPLOADS ?? 10)
const bombs = Number(process.env.BENCH_BOMBS ?? 15)
const MiB = 1024 * 1024
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const status = (pid: number) => {
  const text = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (field: string) =>
    Number(/\s(\d+) kB/.exec(text.split("\n").find((l) => l.startsWith(field)) ?? "")?.[1] ?? 0)
  return { rss: kb("VmRSS:") / 1024, hwm: kb("VmHWM:") / 1024 }
}

/** Samples the RSS every 50 ms while `work` runs; returns the highest sample. */
const peakDuring = async <A>(pid: number, work: () => Promise<A>) => {
  let peak = status(pid).rss
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, status(pid).rss)
    } catch {
      // exited
    }
  }, 50)
  try {
    const result = await work()
    return { peak: Math.max(peak, status(pid).rss), result }
  } finally {
    clearInterval(timer)
  }
}

/** CPU ticks (user + system) the process has used. */
const cpuTicks = (pid: number) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return Number(fields[11]) + Number(fields[12])
}

/**
 * Waits until the service is idle, under 5 % of a core over 2 s: work an upload starts in the
 * background (the vision model's look at the photo) runs on after the answer. Returns the seconds it took.
 */
const settle = async (pid: number, maxMillis = 300_000) => {
  const started = Date.now()
  let last = cpuTicks(pid)
  while (Date.now() - started < maxMillis) {
    await sleep(2000)
    const now = cpuTicks(pid)
    if (now - last < 10) break
    last = now
  }
  return (Date.now() - started) / 1000
}

/** A noisy JPEG of just under 15 MiB: random pixels do not compress, so it is big for its size. */
const bigPhoto = async () => {
  const width = 6000
  const height = 4000
  const noise = Buffer.alloc(width * height * 3)
  for (let i = 0; i < noise.length; i += 4) noise.writeUInt32LE((Math.random() * 0xffffffff) >>> 0, i)
  for (let q = 90; q >= 40; q -= 5) {
    const jpeg = await sharp(noise, { raw: { width, height, channels: 3 } }).jpeg({ quality: q }).toBuffer()
    if (jpeg.length <= maxUploadBytes) return jpeg
  }
  throw new Error("could not make a photo under 15 MiB")
}

const main = async () => {
  const dataDir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-bench-uploads-"))
  fs.chmodSync(dataDir, 0o755)
  const port = await freePort()
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    HOST: "127.0.0.1",
    PORT: String(port),
    DATA_DIR: dataDir,
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    // allocator settings (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_, GLIBC_TUNABLES, LD_PRELOAD of
    // another malloc) and NODE_OPTIONS reach the service as set, to compare them
    ...Object.fromEntries(
      Object.entries(process.env).filter(([k]) =>
        k.startsWith("MALLOC_") || ["GLIBC_TUNABLES", "LD_PRELOAD", "NODE_OPTIONS"].includes(k)
      )
    )
  }
  const child = spawn(process.execPath, [Path.join(root, "packages/server/src/bin/start.ts")], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout.on("data", (d) => (out += d))
  child.stderr.on("data", (d) => (out += d))
  const exited = new Promise((r) => child.once("exit", r))
  const base = `http://127.0.0.1:${port}`
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`service exited:\n${out}`)
        return (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200
      },
      120_000,
      "service"
    )
    const pid = child.pid!
    // the admin CLI's JSON answer, of the shape `A` the caller reads
    const admin = <A>(...args: Array<string>) =>
      new Promise<A>((resolve, reject) => {
        const c = spawn(process.execPath, [Path.join(root, "packages/server/src/bin/admin.ts"), ...args], {
          cwd: root,
          env,
          stdio: ["ignore", "pipe", "pipe"]
        })
        let o = ""
        let e = ""
        c.stdout.on("data", (d) => (o += d))
        c.stderr.on("data", (d) => (e += d))
        c.on("exit", (code) => (code === 0 ? resolve(JSON.parse(o)) : reject(new Error(e))))
      })
    const ws = await admin<{ readonly id: string }>("workspace", "create", "--name", "Bench", "--plan", "custom")
    const key = await admin<{ readonly secret: string }>(
      "key",
      "create",
      ws.id,
      "--scopes",
      "media:read,media:write",
      "--uploads-per-minute",
      "100000",
      "--reads-per-minute",
      "100000"
    )
    const upload = async (bytes: Uint8Array, filename: string) => {
      const form = new FormData()
      form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), filename)
      const r = await fetch(`${base}/api/v1/media`, {
        method: "POST",
        headers: { authorization: `Bearer ${key.secret}` },
        body: form
      })
        .catch((e: Error) => {
          console.log(
            `   ${filename}: no answer (${e.message}${
              (e.cause as Error | undefined)?.message ? `: ${(e.cause as Error).message}` : ""
            })`
          )
          return { status: 0, text: async () => e.message }
        })
      await r.text()
      return r.status
    }
    const photo = await bigPhoto()
    const over = new Uint8Array(maxUploadBytes + 1).fill(0x41)
    const nearBomb = pngBomb(10_000, 9_990)
    const overBomb = pngBomb(20_000, 20_000)
    const mib = (n: number) => `${n.toFixed(0)} MiB`

    const ready = status(pid).rss
    await upload(fs.readFileSync(Path.join(root, "test/fixtures/rocket.jpg")), "rocket.jpg")
    const warm = await settle(pid)
    const start = status(pid).rss
    console.log(
      `service pid ${pid}; photo ${(photo.length / MiB).toFixed(2)} MiB JPEG 6000x4000; bombs ${
        (nearBomb.length / 1024).toFixed(0)
      } KiB (99.9 MP) and ${(overBomb.length / 1024).toFixed(0)} KiB (400 MP); load average ${
        os.loadavg()[0].toFixed(1)
      }`
    )
    console.log(
      `0. start: RSS ${mib(ready)} when ready, ${mib(start)} after one upload and its inference (quiet after ${
        warm.toFixed(0)
      } s)`
    )
    const vsStart = (rss: number) =>
      `${rss >= start ? "+" : ""}${(((rss - start) / start) * 100).toFixed(1)} % from start`

    /** A scenario's peak spans its requests and the background work they start (the vision model). */
    const scenario = async (
      label: string,
      steps: ReadonlyArray<{ readonly name: string; readonly send: () => Array<Promise<number>> }>
    ) => {
      const before = status(pid).rss
      let peak = before
      for (const step of steps) {
        const { peak: p, result } = await peakDuring(pid, () => Promise.all(step.send()))
        peak = Math.max(peak, p)
        const tally = result.reduce<Record<number, number>>((t, s) => ({ ...t, [s]: (t[s] ?? 0) + 1 }), {})
        console.log(`   ${step.name} → statuses ${JSON.stringify(tally)}; peak RSS ${mib(p)}`)
      }
      const { peak: p, result: quiet } = await peakDuring(pid, () => settle(pid))
      peak = Math.max(peak, p)
      await sleep(5_000)
      const idle = status(pid).rss
      console.log(
        `${label}: start ${mib(before)}, peak ${mib(peak)}, idle-after ${mib(idle)} (${vsStart(idle)}; quiet ${
          quiet.toFixed(0)
        } s after the last answer, read 5 s later); load average ${os.loadavg()[0].toFixed(1)}`
      )
      return { peak, idle }
    }

    console.log(
      `1. uploads: ${rounds} rounds of ${concurrent} × ${(photo.length / MiB).toFixed(1)} MiB + 3 × 15 MiB+1 at once`
    )
    const uploads = await scenario(
      "1. uploads",
      Array.from({ length: rounds }, (_, r) => ({
        name: `round ${r + 1}`,
        send: () => [
          ...Array.from({ length: concurrent }, (_, i) => upload(photo, `photo-${r}-${i}.jpg`)),
          ...Array.from({ length: 3 }, (_, i) => upload(over, `over-${r}-${i}.jpg`))
        ]
      }))
    )
    console.log(`2. bombs: ${bombs} PNGs at once, twice`)
    const bombed = await scenario(
      "2. bombs",
      ([["99.9 MP", nearBomb], ["400 MP", overBomb]] as const).map(([name, bytes]) => ({
        name: `${bombs} × ${name} PNG`,
        send: () => Array.from({ length: bombs }, (_, i) => upload(bytes, `bomb-${i}.png`))
      }))
    )
    console.log(`kernel peak VmHWM ${mib(status(pid).hwm)}`)
    const ok = uploads.peak <= 512 && bombed.peak <= 512 && uploads.idle <= start * 1.1 && bombed.idle <= start * 1.1
    console.log(`target (peak ≤ 512 MiB, idle-after within 10 % of start, both scenarios): ${ok ? "met" : "NOT met"}`)
  } finally {
    child.kill("SIGTERM")
    await exited
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
