import * as fs from "node:fs"
import * as Path from "node:path"
import { expect, it } from "vitest"
import { promtool, promtoolBinary } from "../support/prometheus.ts"
import { root } from "../support/service.ts"

/**
 * The alerts of deploy/prometheus/alerts.yml. promtool (Debian's prometheus package, as
 * the Prometheus test uses) accepts the file, and its unit tests (deploy/prometheus/alerts.test.yml)
 * fire each alert on the series that should fire it, only after its `for`, and keep it quiet on
 * healthy ones. Each alert links a runbook in docs/operations.md that says what it means, what to
 * check and what to do. The runner alerts fire against real processes in prometheus.test.ts.
 */
const rulesFile = Path.join(root, "deploy/prometheus/alerts.yml")
const rules = fs.readFileSync(rulesFile, "utf8")
const operations = fs.readFileSync(Path.join(root, "docs/operations.md"), "utf8")

/** Each `- alert:` block of the rules file, as text. */
const alerts = rules.split(/^\s+- alert: /m).slice(1).map((block) => ({ name: block.split("\n")[0].trim(), block }))

/** GitHub's anchor of a heading: lower case, spaces to dashes, punctuation dropped. */
const anchorOf = (heading: string) => heading.trim().toLowerCase().replace(/[^\w\- ]/g, "").replace(/ /g, "-")

it("promtool accepts the rules and their unit tests pass", async () => {
  expect(fs.existsSync(promtoolBinary), `${promtoolBinary} (Debian's prometheus package)`).toBe(true)
  const checked = await promtool("check", "rules", rulesFile)
  expect(checked.code, checked.output).toBe(0)
  expect(checked.output).toContain(`SUCCESS: ${alerts.length} rules found`)
  const tested = await promtool("test", "rules", Path.join(root, "deploy/prometheus/alerts.test.yml"))
  expect(tested.code, tested.output).toBe(0)
  expect(tested.output).toContain("SUCCESS")
})

it("every alert the issue asks for is there, with a severity, a summary and a runbook in docs/operations.md", () => {
  expect(alerts.map((a) => a.name).sort()).toEqual(
    [
      "ApiErrorRatioHigh",
      "DatabasePoolSaturated",
      "NoRunnerHeartbeats",
      "RenderQueueTooOld",
      "RunnerDown",
      "TraceExportFailing"
    ]
  )
  // every one is exercised by the unit tests
  const tests = fs.readFileSync(Path.join(root, "deploy/prometheus/alerts.test.yml"), "utf8")
  const headings = [...operations.matchAll(/^(#{2,5}) (.+)$/gm)].map((m) => ({
    level: m[1].length,
    text: m[2],
    at: m.index
  }))
  for (const { block, name } of alerts) {
    expect(tests, `${name} has a unit test`).toMatch(
      new RegExp(`alertname: ${name}\\n\\s+exp_alerts:\\n\\s+- exp_labels`)
    )
    expect(block, name).toMatch(/severity: (warning|critical)/)
    expect(block, name).toMatch(/summary: "/)
    const runbook = /runbook: "docs\/operations\.md#([\w-]+)"/.exec(block)?.[1]
    expect(runbook, `${name}: a runbook annotation`).toBeDefined()
    const i = headings.findIndex((h) => anchorOf(h.text) === runbook)
    expect(i, `${name}: docs/operations.md has a heading for #${runbook}`).toBeGreaterThanOrEqual(0)
    const next = headings.slice(i + 1).find((h) => h.level <= headings[i].level)
    const section = operations.slice(headings[i].at, next?.at)
    for (const part of ["What it means", "What to check", "What to do"]) {
      expect(section, `${name}'s runbook says ${part.toLowerCase()}`).toContain(`**${part}**`)
    }
  }
  // the compose file's Prometheus loads this file
  expect(fs.readFileSync(Path.join(root, "deploy/prometheus/prometheus.yml"), "utf8")).toMatch(
    /rule_files:\n\s+- \/etc\/prometheus\/alerts\.yml/
  )
})
