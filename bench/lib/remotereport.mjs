// Writes the remote-provider results: remote.json (every run's samples, the
// summaries and the budget verdicts) and remote.md (tables, verdicts, load,
// method).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { machineLine, perRunTable, range, ratio, row } from "./providerreport.mjs";
import { WATCHES, manyWaitsTable } from "./manywaits.mjs";
import { OPS, WAKE, WAKE_SEEN } from "./remoteload.mjs";
import { fmt, quantile, summary } from "./stats.mjs";

// The budgets: a get_task's p50 over the cell's baseline p50, per provider.
export const REMOTE_BUDGETS = [
  { provider: "docker", op: "get_task (running)", limit: 1.5, baseline: "one raw archive GET" },
  { provider: "docker", op: "get_task (finished)", limit: 1.5, baseline: "one raw archive GET" },
  // Defined at an added latency: with none, the cell measures CPU on this
  // machine (taskbox's and the fake's), not round trips, and is shown only.
  { provider: "e2b", op: "get_task (running)", limit: 2, baseline: "one request (GET /files) at the fake's latency", withLatency: true },
  { provider: "e2b", op: "get_task (finished)", limit: 2, baseline: "one request (GET /files) at the fake's latency", withLatency: true },
  // A waiting get_task returns within one round trip of the task's end
  // becoming visible in the sandbox (its final record in place). Where
  // that moment is not observed (docker's files are the engine's), from
  // the task's exit, earlier still.
  { provider: "docker", op: "waiting get_task, task exit to return,", limit: 1, baseline: "one raw archive GET", wake: "wake" },
  { provider: "e2b", op: "waiting get_task, record in place to return,", limit: 1, baseline: "one request (GET /files) at the fake's latency", withLatency: true, wake: "seen" },
];

// Per cell, across runs: each op's p50 and p99 and its p50 over the
// baseline's; the wake-up's p50 and p99 per run, and p99 over all its
// samples pooled.
export function summariseRemote(meta, runs) {
  const out = {};
  for (const c of meta.cells) {
    const per = (op, q) => runs.map((r) => quantile(r.cells[c.instance]?.[op] || [], q));
    const s = { ops: {}, wake: {} };
    for (const op of OPS) {
      const p50 = per(op, 0.5);
      const base = per("baseline", 0.5);
      s.ops[op] = {
        p50: summary(p50),
        p99: summary(per(op, 0.99)),
        ratio: summary(p50.map((v, i) => ratio(v, base[i]))),
        n: runs.reduce((a, r) => a + (r.cells[c.instance]?.[op]?.length || 0), 0),
      };
    }
    for (const [key, op] of [["wake", WAKE], ["seen", WAKE_SEEN]]) {
      const pooled = runs.flatMap((r) => r.cells[c.instance]?.[op] || []);
      const base = per("baseline", 0.5);
      s[key] = {
        p50: summary(per(op, 0.5)),
        p99: summary(per(op, 0.99)),
        ratio: summary(per(op, 0.5).map((v, i) => ratio(v, base[i]))),
        pooledP50: quantile(pooled, 0.5),
        pooledP99: quantile(pooled, 0.99),
        n: pooled.length,
        dropped: runs.reduce((a, r) => a + (r.cells[c.instance]?.["wake-up samples dropped (task ended before the wait began)"] || 0), 0),
      };
    }
    out[c.instance] = s;
  }
  const budgets = [];
  for (const b of REMOTE_BUDGETS)
    for (const c of meta.cells.filter((x) => x.provider === b.provider && (!b.withLatency || x.latency > 0))) {
      const r = b.wake ? out[c.instance][b.wake].ratio : out[c.instance].ops[b.op].ratio;
      budgets.push({
        ...b,
        instance: c.instance,
        latency: c.latency,
        supervisor: c.supervisor,
        ...r,
        verdict: r.n === 0 ? "NOT MEASURED" : r.median <= b.limit ? "PASS" : "FAIL",
        worstHolds: r.n > 0 && r.max <= b.limit,
      });
    }
  return { cells: out, budgets };
}

export function writeRemoteResults(dir, meta, runs, many = []) {
  mkdirSync(dir, { recursive: true });
  const sum = summariseRemote(meta, runs);
  const sup = (c) => `, ${c.supervisor}`;
  const cellName = (c) => `${c.provider}, +${c.latency} ms${sup(c)}`;
  const md = [
    "## Remote providers: taskbox's calls against one raw request to the same backend",
    "",
    `Written by \`bench/run.sh\` (bench/remote.mjs) on ${meta.date}: ${runs.length} measured runs after one warm-up run. Each figure is the median (min–max) across runs of that run's value; each ratio is a call's p50 over the baseline's p50 measured in the same run on the same cell, interleaved with it, then summarised across runs. Latency in ms; lower is better.`,
    "",
    `- taskbox ${meta.taskboxVersion}: ${meta.taskboxBin} (sha256 ${meta.taskboxSha256.slice(0, 16)}…, built ${meta.taskboxMtime}), copied once; plugins ${Object.entries(meta.plugins).map(([p, v]) => `${p}.so (sha256 ${v.sha256.slice(0, 16)}…, built ${v.mtime})`).join(", ") || "n/a"}${meta.staticSupervisor ? `; taskbox-supervisor-static (sha256 ${meta.staticSupervisor.sha256.slice(0, 16)}…, built ${meta.staticSupervisor.mtime}) beside the copy` : ""}; ${meta.podman || "no engine"}; node ${meta.node}.`,
    machineLine(meta),
    `- run time ${meta.seconds.toFixed(0)} s (engine, fakes and sandboxes set up in ${fmt(meta.setupSeconds)} s); per cell and run: ${meta.calls} baselines and ${meta.calls} get_tasks of each kind, ${meta.starts} start_tasks and ${meta.starts} run_commands, ${meta.waits} waiting get_tasks (the warm-up run ${meta.light.calls}, ${meta.light.starts} and ${meta.light.waits}).`,
    ...meta.notes.map((x) => `- Note: ${x}`),
    "",
    "### Budgets",
    "",
    "A budget passes when the median across runs meets it; the worst run is shown too.",
    "",
    row(["budget", "cell", "p50 ratio, median (min–max)", "verdict", "worst run holds"]),
    row(["---", "---", "---:", "---", "---"]),
    ...sum.budgets.map((b) =>
      row([`${b.provider} ${b.op} p50 <= ${b.limit}x ${b.baseline}`, `+${b.latency} ms${sup(b)}`, range(b), `**${b.verdict}**`, b.worstHolds ? "yes" : "no"]),
    ),
    "",
    "### Calls against the baseline",
    "",
    "Baselines: docker, one `GET /containers/{id}/archive?path=<the running task's status.json>` on the engine socket that cell's taskbox uses (the engine's own at +0 ms, the latency proxy's otherwise); e2b, one `GET /files?path=<the same file>` on that cell's fake envd with the sandbox's access token. Both on one kept-alive connection.",
    "",
    row(["cell", "op", "p50", "p99", "p50 / baseline p50", "samples"]),
    row(["---", "---", "---:", "---:", "---:", "---:"]),
  ];
  for (const c of meta.cells) {
    const s = sum.cells[c.instance];
    for (const op of OPS)
      md.push(row([cellName(c), op === "baseline" ? `baseline: ${c.baseline}` : op, range(s.ops[op].p50), range(s.ops[op].p99), op === "baseline" ? "1" : range(s.ops[op].ratio), s.ops[op].n]));
  }
  md.push(
    "",
    "### Wake-up of a waiting get_task",
    "",
    "Two figures per wait. **From exit**: task exit to get_task return: a task `sleep S; exec python3 -c 'import os, time; print(time.time_ns(), flush=True); os._exit(0)'` (S per cell: 0.2 s plus the warm-up run's p50 of start_task, get_task and run_command, so that start_task has returned, the get_task's first check is over and its watch, an exec, is running before the task ends), then at once a get_task with `wait: 30` and a stdout_offset past the stamp, so only the task's end ends the wait; the sample is the client's wall clock at the return minus the stamp. p50 and p99 per run summarised across runs, and over all the runs' samples pooled. A sample whose stamp came before the get_task was sent would measure no wait and is dropped (counted). **From the record** (e2b only, whose sandbox files are the host's): the same return minus the moment the task's end became visible in the sandbox, the final status record renamed into place, as bench/seen.c saw it (an inotify watch on the task's directory, started on the host before the get_task was sent: one more process woken at that moment); the difference between the two is the supervisor's noticing the exit and writing the record. The wake-up budgets take the record's figure on e2b, at an added latency (at +0 ms it measures this machine's CPU, as the get_task budgets' cells do), and the exit's on docker, each against the cell's baseline: one round trip.",
    "",
    row(["cell", "S (s)", "from exit: p50", "p99 (per run)", "pooled p50", "pooled p99", "from the record: p50", "p99 (per run)", "p50 / baseline p50", "samples", "dropped"]),
    row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]),
    ...meta.cells.map((c) => {
      const w = sum.cells[c.instance].wake;
      const r = sum.cells[c.instance].seen;
      const seen = r.n > 0 ? [range(r.p50), range(r.p99), range(r.ratio)] : ["n/a", "n/a", "n/a"];
      return row([cellName(c), c.wakeSleep ?? "n/a", range(w.p50), range(w.p99), fmt(w.pooledP50), fmt(w.pooledP99), ...seen, w.n, w.dropped]);
    }),
    "",
    ...manyWaitsTable(
      many,
      (m) => `${cellName(m)}${m.watches === WATCHES ? "" : `, w${m.watches}`}`,
      (m) => sum.cells[`${m.provider}-${m.latency}${m.supervisor === "static" ? "-static" : ""}`]?.wake.p50,
      `The cells named w16 are an e2b instance with \`"watches": 16\` on the same fake. "One wait" is the cell's single wake-up p50 above (median of runs).`,
    ),
    ...perRunTable(meta, runs),
    "",
    "### Method",
    "",
    "One taskbox binary (`taskbox serve` on stdio, the official MCP SDK client, one call at a time) with one provider instance per cell in its config; its plugins are those of TASKBOX_PLUGIN_PATH. **docker**: podman's Docker API service on a unix socket with the locally built test image (tests/docker/engine.sh start); at +N ms the plugin's `host` is the socket of tests/docker/latency-proxy.mjs (`engine.sh latency DIR N`), which forwards each connection to the engine and holds every chunk the client sends for N ms (the answers pass at once), so every request the plugin makes costs N ms more. **e2b**: the E2B fake (tests/e2b/fake/server.mjs `--latency-ms N`), which takes each request up N ms after it arrives, on both planes, so the first byte of every answer (a Connect stream's first envelope included) leaves N ms later; the later chunks of a stream are not delayed. The e2b plugin's `api_url` and `sandbox_url` name that fake. Each provider and latency twice, the instance's `\"supervisor\"` set explicitly: `\"python3\"` (the default before the static supervisor became the default where it runs in the sandbox) and, in the cells marked static, `\"static\"` (the static native supervisor, today's default, copied into the cell's sandbox by its first verb, before anything is timed).",
    "",
    "Per cell: one sandbox (`create_sandbox` with `provider`), a running task (`echo ready; exec sleep 2987`) and a finished one (`echo done`), made before anything is timed. Per run, the cells take turns (the order rotated each run); on each cell the baseline, get_task on the running task (state checked `running`), get_task on the finished task (checked `succeeded` with its output), start_task (`true`) and run_command (`true`, exit code checked) take turns three calls at a time; then the waiting get_tasks. Latency is `performance.now()` around each call in the client. The warm-up run also sets each cell's S: 0.2 s plus that cell's start_task p50 plus its get_task (running) p50 in that run, rounded up to 0.1 s, between 0.3 and 5 s; the machine's other load stretches S with the calls it covers.",
    "",
  );
  writeFileSync(join(dir, "remote.md"), md.join("\n"));
  writeFileSync(join(dir, "remote.json"), JSON.stringify({ meta, summary: sum, runs, many }, null, 2) + "\n");
}
