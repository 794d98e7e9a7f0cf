// Judges a conformance run (0.2.0-alpha.12) against a baseline, like the
// suite's own --expected-failures, but over every scenario the run ran:
// with --requirements the suite judges only the scored ones and leaves out
// those it runs unscored (the tasks-* extension, the pending
// http-header-validation, ...), so a regression there would pass unseen.
//
//   node baseline-2026.mjs BASELINE.yml RESULTS_DIR SUITE_STDOUT
//
// BASELINE.yml: a "server:" list of "scenario" (the whole scenario may
// fail) or "scenario:check-id" (only that check may), "#" comments. A
// check fails when its status is FAILURE or WARNING (repeats of an id
// count as the most severe one). Exit 1 when a scenario or check fails
// that the baseline does not list, when a listed one passes, when a
// listed scenario or check was not run at all, or when a scenario that
// ran left no checks.json; exit 2 on a bad baseline or missing input.
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";

const [baselinePath, resultsDir, stdoutPath] = process.argv.slice(2);
if (!baselinePath || !resultsDir || !stdoutPath) {
  console.error("usage: baseline-2026.mjs BASELINE.yml RESULTS_DIR SUITE_STDOUT");
  process.exit(2);
}

function die(msg) {
  console.error(`baseline-2026: ${msg}`);
  process.exit(2);
}

// The baseline: only the subset of YAML that file uses.
const wholesale = new Set();
const perCheck = new Map(); // scenario -> Set of check ids
{
  let inServer = false;
  readFileSync(baselinePath, "utf8").split("\n").forEach((raw, i) => {
    const line = raw.replace(/\s+#.*$/, "").replace(/^#.*$/, "").trimEnd();
    if (!line.trim()) return;
    if (/^server:$/.test(line)) {
      inServer = true;
      return;
    }
    const m = /^\s+-\s+([A-Za-z0-9_/.-]+)(?::([A-Za-z0-9_$/.-]+))?$/.exec(line);
    if (!inServer || !m)
      die(`${baselinePath}:${i + 1}: not a "server:" list entry: ${raw}`);
    const [, scenario, check] = m;
    if (!check) wholesale.add(scenario);
    else {
      if (!perCheck.has(scenario)) perCheck.set(scenario, new Set());
      perCheck.get(scenario).add(check);
    }
  });
  for (const s of perCheck.keys())
    if (wholesale.has(s))
      die(`${baselinePath}: ${s} is listed whole and by check`);
}

// The scenarios the suite ran, in order, and the checks each left.
let stdout;
try {
  stdout = readFileSync(stdoutPath, "utf8");
} catch (e) {
  die(`cannot read ${stdoutPath}: ${e.message}`);
}
const ran = [...stdout.matchAll(/^=== Running scenario: (\S+) ===$/gm)].map((m) => m[1]);
if (ran.length === 0) die(`${stdoutPath} names no scenario run`);
const checksOf = new Map();
if (existsSync(resultsDir))
  for (const dir of readdirSync(resultsDir)) {
    const m = /^server-(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/.exec(dir);
    const file = join(resultsDir, dir, "checks.json");
    if (m && existsSync(file))
      checksOf.set(m[1], JSON.parse(readFileSync(file, "utf8")));
  }

const isFailed = (c) => c.status === "FAILURE" || c.status === "WARNING";
const severity = (s) => ({ FAILURE: 3, WARNING: 2, SUCCESS: 1 })[s] ?? 0;
// One verdict per check id: its most severe status (INFO is no verdict).
function collapse(checks) {
  const worst = new Map();
  for (const c of checks) {
    if (c.status === "INFO") continue;
    const cur = worst.get(c.id);
    if (!cur || severity(c.status) >= severity(cur.status)) worst.set(c.id, c);
  }
  return worst;
}

const unexpected = [], stale = [], expected = [], notRun = [];
let passed = 0, failed = 0;
for (const scenario of ran) {
  const checks = checksOf.get(scenario);
  if (!checks) {
    unexpected.push(`${scenario} (left no checks.json: it did not run to its end)`);
    continue;
  }
  passed += checks.filter((c) => c.status === "SUCCESS").length;
  failed += checks.filter(isFailed).length;
  const worst = collapse(checks);
  const failing = [...worst.values()].filter(isFailed);
  if (wholesale.has(scenario)) {
    (failing.length ? expected : stale).push(scenario);
    continue;
  }
  const listed = perCheck.get(scenario) ?? new Set();
  for (const c of failing) {
    const entry = `${scenario}:${c.id}`;
    if (listed.has(c.id)) expected.push(entry);
    else unexpected.push(`${entry} (${c.status}: ${(c.errorMessage ?? "").slice(0, 300)})`);
  }
  for (const id of listed) {
    const c = worst.get(id);
    if (!c) notRun.push(`${scenario}:${id}`);
    else if (c.status === "SUCCESS") stale.push(`${scenario}:${id}`);
  }
}
for (const s of [...wholesale, ...perCheck.keys()])
  if (!ran.includes(s)) notRun.push(s);

console.log(`\nbaseline-2026: ${ran.length} scenarios run (scored and unscored), ` +
  `${passed} checks passed, ${failed} failed or warned; ` +
  `${expected.length} baseline entries failed as expected`);
const show = (title, list) => {
  if (list.length === 0) return;
  console.log(`\nbaseline-2026: ${title}:`);
  for (const e of list) console.log(`  ${e}`);
};
show("failing, not in the baseline (a server bug, or a fixture to add)", unexpected);
show("in the baseline but passing (remove them from it)", stale);
show("in the baseline but not run (renamed or gone? fix the baseline)", notRun);
const bad = unexpected.length + stale.length + notRun.length;
console.log(bad ? "\nbaseline-2026: FAILED" : "\nbaseline-2026: ok");
process.exit(bad ? 1 : 0);
