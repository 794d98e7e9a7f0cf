// The benchmark driver: taskbox (local provider) against DesktopCommander and
// the machine's own floors, through the official MCP SDK client, in one run.
// Run it through bench/run.sh, which builds and installs what it needs.
//
// Environment:
//   TASKBOX_BIN          the taskbox binary (required)
//   TASKBOX_PLUGIN_PATH  passed on to taskbox (the build's plugin dirs)
//   BENCH_ECHO_BIN       the built bench/echo.c (required)
//   BENCH_STAMP_BIN      the built bench/stamp.c (required)
//   BENCH_RUNS           measured runs after the warm-up (default 5, at least 5 for results)
//   BENCH_RESULTS        where to write the results (default: bench/results)
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runFigures, runRatios, summarise } from "./lib/figures.mjs";
import { loadAverage, machineTicks } from "./lib/procfs.mjs";
import { writeResults } from "./lib/report.mjs";
import { DC_SLEEP, TB_SLEEP, latencyRound, reapLeftovers } from "./lib/rounds.mjs";
import { SCALE_SLEEP, scalePhase, throughputRound } from "./lib/scale.mjs";
import { waitPhase } from "./lib/wait.mjs";
import {
  connectDesktopCommander,
  connectEcho,
  connectTaskbox,
  prepareDesktopCommanderHome,
} from "./lib/servers.mjs";
import { fmt } from "./lib/stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const TASK_TOOLS = ["create_sandbox", "start_task", "get_task", "cancel_task", "kill_sandbox"];

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run bench/run.sh`);
  return v;
}

const log = (msg) => process.stderr.write(`bench: ${msg}\n`);

function packageVersion(name) {
  return JSON.parse(readFileSync(join(here, "node_modules", name, "package.json"), "utf8")).version;
}

function machine() {
  const cpu = cpus()[0]?.model?.trim() || "unknown CPU";
  return {
    cpu,
    cores: cpus().length,
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
    kernel: `Linux ${readFileSync("/proc/sys/kernel/osrelease", "utf8").trim()}`,
    node: process.versions.node,
  };
}

// One measured (or warm-up) run of the latency and throughput figures.
async function oneRun(ctx) {
  const t0 = machineTicks();
  const recs = [await latencyRound(ctx), await throughputRound(ctx)];
  const t1 = machineTicks();
  recs[1].set("machine busy % during the run (all cores, all users)", (100 * (t1.busy - t0.busy)) / (t1.total - t0.total));
  recs[1].set("load average (1 min) at the end of the run", loadAverage()[0]);
  return recs;
}

// Merges a run's records into its samples, figures and pairwise ratios.
function merge(recs) {
  const samples = {};
  for (const r of recs) for (const [k, v] of Object.entries(r.samples)) samples[k] = v;
  const figures = runFigures(recs);
  return { samples, figures, ratios: runRatios(figures) };
}

async function main() {
  const runs = Number(process.env.BENCH_RUNS || 5);
  const results = process.env.BENCH_RESULTS || join(here, "results");
  const scratch = mkdtempSync(join(tmpdir(), "taskbox-bench-"));
  const ctx = {
    taskboxBin: need("TASKBOX_BIN"),
    echoBin: need("BENCH_ECHO_BIN"),
    stampBin: need("BENCH_STAMP_BIN"),
    tbState: join(scratch, "taskbox"),
    dcHome: join(scratch, "dc-home"),
  };
  const supervisor = join(here, "..", "core", "supervisor", "taskbox_supervisor.py");
  if (existsSync(supervisor)) {
    ctx.supervisorSource = readFileSync(supervisor, "utf8");
    ctx.supervisorRoot = join(scratch, "supervisor-direct");
  }
  const notes = [];
  prepareDesktopCommanderHome(ctx.dcHome);
  const t0 = performance.now();
  const ticks0 = machineTicks();
  const loadStart = loadAverage();

  ctx.echo = await connectEcho(ctx.echoBin);
  ctx.dc = await connectDesktopCommander(ctx.dcHome);
  try {
    ctx.tb = await connectTaskbox(ctx.taskboxBin, ctx.tbState);
  } catch (e) {
    notes.push(`taskbox did not start, none of its figures are measured: ${e.message.split("\n").join(" ").trim()}`);
    ctx.tb = null;
    ctx.taskboxBin = null;
  }
  const names = new Set((ctx.tb?.tools || []).map((t) => t.name));
  const missing = TASK_TOOLS.filter((n) => !names.has(n));
  ctx.tbTasks = missing.length === 0;
  if (ctx.tb && !ctx.tbTasks) notes.push(`taskbox lacks ${missing.join(", ")}: its task figures are not measured`);
  let version = "(not built)";
  if (ctx.tb) version = execFileSync(ctx.taskboxBin, ["--version"], { encoding: "utf8" }).trim();

  const measured = [];
  ctx.log = log;
  try {
    const recs = [];
    for (let i = 0; i <= runs; i++) {
      const label = i === 0 ? "warm-up" : `run ${i}/${runs}`;
      const ts = performance.now();
      ctx.runIndex = i;
      ctx.light = i === 0;
      const got = await oneRun(ctx);
      if (i > 0) recs.push(got);
      const run = merge(got);
      const r = run.ratios;
      log(`${label} (${fmt((performance.now() - ts) / 1000)} s): get_task/ping ${fmt(r["get_task (running) / taskbox ping"])}, ` +
        `DC read/get_task ${fmt(r["DC read_process_output (running) / get_task (running)"])}, ` +
        `start_task/sh ${fmt(r["start_task / sh -c true spawn"])}, ping/echo ${fmt(r["taskbox ping / C echo ping"])}, ` +
        `drain/raw ${fmt(r["1 GiB drain / raw pipe"])}, load ${loadAverage()[0]}`);
      if (process.env.BENCH_VERBOSE)
        for (const [k, v] of Object.entries(run.samples))
          log(`  ${k}: ${v.length} calls, ${fmt(v.reduce((a, b) => a + b, 0) / 1000)} s, p50 ${fmt(v.slice().sort((a, b) => a - b)[v.length >> 1])}`);
    }
    if (ctx.tbTasks) {
      const ts = performance.now();
      const scale = await scalePhase(ctx, runs);
      scale.forEach((rec, i) => recs[i].push(rec));
      log(`scale (${fmt((performance.now() - ts) / 1000)} s)`);
      const tw = performance.now();
      const waits = await waitPhase(ctx, runs);
      waits.forEach((rec, i) => recs[i].push(rec));
      if (waits.length) log(`wait (${fmt((performance.now() - tw) / 1000)} s)`);
      else notes.push("get_task takes no `wait`: the wait figure is not measured");
    }
    measured.push(...recs.map(merge));
  } finally {
    await Promise.allSettled([ctx.echo.close(), ctx.dc.close(), ctx.tb?.close()]);
    for (const argv of [DC_SLEEP, TB_SLEEP, SCALE_SLEEP]) await reapLeftovers(argv);
  }
  const ticks1 = machineTicks();
  const sum = summarise(measured);
  if (runs < 5) notes.push(`only ${runs} measured runs: the budgets ask for at least 5`);
  const meta = {
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    runs,
    ...machine(),
    taskboxVersion: version.replace(/^taskbox\s*/, ""),
    sdk: packageVersion("@modelcontextprotocol/sdk"),
    dc: packageVersion("@wonderwhy-er/desktop-commander"),
    loadStart,
    loadEnd: loadAverage(),
    busyPercent: (100 * (ticks1.busy - ticks0.busy)) / (ticks1.total - ticks0.total),
    seconds: (performance.now() - t0) / 1000,
    method: [
      "One official SDK client (`Client` + `StdioClientTransport`) in one Node process drives every server over stdio; the timer is `performance.now()` around each awaited call, nothing else in flight.",
      "taskbox runs `serve` on its built-in default config (the local provider) with a scratch state dir; DesktopCommander runs with a scratch HOME, telemetry and onboarding off, its flag fetch pointed at a closed loopback port, its Chrome download pre-empted. Both get the same system PATH.",
      "Per run: 5 connects of taskbox and of the echo loop, 1 of DesktopCommander; 200 pings of each server, interleaved in blocks of 20; 12 `sh -c true` spawns, start_task and start_process calls interleaved in blocks of 4 (commands `echo ready; exec sleep N`); 40 get_task / read_process_output (`timeout_ms: 0`) calls cycling over those running tasks, and 40 on a finished `echo done`, interleaved in blocks of 10 with 40 taskbox pings (the ping that get_task is compared with is the one measured beside it); then cancel_task / force_terminate of the 12 (blocks of 5). The warm-up run is the same at a quarter of the counts and with 128 MiB instead of 1 GiB.",
      "`sh -c true` is spawned with node's `child_process.spawn` and timed to its exit, with the same timer. Interleaved with the starts, two diagnostics of start_task's cost are spawned the same way: `python3 -I -S -c pass` (the interpreter alone) and the supervisor's `start` verb run directly on a scratch root (no server, no provider).",
      "Scale, after the runs above: one sandbox grown once to 1, then 16, then 128 running `exec sleep N` tasks; at each level, after 50 warm-up calls, each of the runs takes 200 get_task calls cycling over the tasks (p50, p99) interleaved with 200 pings, the server's VmRSS, and the summed utime+stime of the supervisors (the parents of the task processes, from /proc/PID/stat) over a 2 s window while the tasks sleep, in % of one core.",
      "Throughput: `sh -c 'head -c 1073741824 /dev/zero | cat >/dev/null'` timed to its exit, and a task `head -c 1073741824 /dev/zero` timed from the start_task call to the first get_task (polled every 10 ms, `limit: 1`, so the polls take little CPU from the drain) that reports a terminal state; two passes per run, raw first then task first, and each side's best pass is compared (other work on the machine only slows a pass down).",
      "Wait, after the scale phase: in one sandbox, each run starts 100 tasks `sleep 0.2; exec STAMP` one after another (STAMP is bench/stamp.c: the task's last process reads the wall clock, prints it in ns and exits a few system calls later; until 2026-12 the task ended with `date +%s%N`, which spends a millisecond or more after reading the clock and then waits for the shell to exit, all charged to taskbox), each followed at once by a get_task with `wait: 30` and `stdout_offset: 20` (past the 20 bytes the task prints, so only the task's end ends the wait); the figure is the client's wall clock (`performance.timeOrigin + performance.now()`) when that call returns minus the printed time (p50 and p99 of the run's 100; the budget is the larger of p50 / 5 ms and p99 / 10 ms, at most 1 in every run).",
      "Idle RSS: VmRSS of the server process after connect, tools/list and one ping (DesktopCommander: after 200 ms more).",
    ],
    notes,
  };
  writeResults(results, meta, measured, sum);
  await new Promise((r) => setTimeout(r, 500)); // supervisors write their last status
  try {
    rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
  } catch (e) {
    log(`could not remove ${scratch}: ${e.message}`);
  }
  log(`wrote ${join(results, "RESULTS.md")}`);
  for (const b of sum.budgets) log(`${b.verdict.padEnd(4)} ${b.what}: ${fmt(b.median)} ${b.unit} (${fmt(b.min)}..${fmt(b.max)})`);
}

main().then(
  () => process.exit(0),
  (e) => {
    log(`failed: ${e.stack || e}`);
    process.exit(1);
  },
);
