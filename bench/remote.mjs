// The remote-provider benchmark: what taskbox's calls cost on the docker
// and e2b providers against one raw request to the same backend, with no
// added latency and with a network's worth of it.
//
// Cells: each provider at each added latency (BENCH_REMOTE_LATENCIES,
// default 0 and 50 ms). docker: a real engine (podman's Docker API service,
// tests/docker/engine.sh), reached directly at 0 ms and through
// tests/docker/latency-proxy.mjs (`engine.sh latency DIR MS`: every chunk a
// client sends held MS ms) otherwise. e2b: the E2B fake (tests/e2b/fake)
// started with --latency-ms MS (every request taken up MS ms after it
// arrives). Each of those with "supervisor": "python3" and with
// "supervisor": "static" (the static native supervisor copied into the
// sandbox, the default where it runs there), set explicitly. One taskbox
// process (the real
// binary, stdio, the official MCP SDK client) has one provider instance per
// cell.
//
// Per cell and run, interleaved three at a time: the baseline (one raw GET
// of a small file on the same backend and path: docker `GET
// /containers/{id}/archive?path=<the running task's status.json>` on the
// engine socket the cell's taskbox uses; e2b `GET /files?path=<the same
// file>` on the cell's fake envd; one kept-alive connection), get_task on a
// running and on a finished task, start_task and run_command; then the
// wake-up of a waiting get_task (task exit to return), as bench/lib/wait.mjs
// measures it on the local provider. After the runs, once per cell, many
// waits at once (bench/lib/manywaits.mjs): BENCH_REMOTE_MANY tasks held at
// a FIFO, a waiting get_task on each, the server's memory and threads with
// every watch running, and each wait's wake-up when they all end together;
// on e2b also on an instance configured with "watches": 16, where the rest
// look between pauses. Every ratio is a call's p50 over the
// baseline's p50 in the same run, then summarised as median (min–max)
// across runs. Run it through bench/run.sh (BENCH_ONLY=remote runs this
// part alone).
//
// Environment:
//   TASKBOX_BIN              the taskbox binary (required; copied first)
//   TASKBOX_PLUGIN_PATH      the build's plugin dirs (docker, e2b)
//   BENCH_REMOTE_RUNS        measured runs after a warm-up (default 3)
//   BENCH_REMOTE_CALLS       baselines and get_tasks of each kind per cell
//                            and run (default 6)
//   BENCH_REMOTE_STARTS      start_tasks and run_commands per cell and run
//                            (default 3)
//   BENCH_REMOTE_WAITS       waiting get_tasks per cell and run (default 3)
//   BENCH_REMOTE_MANY        waits at once, once per cell (default 48; 0
//                            skips them)
//   BENCH_REMOTE_LATENCIES   added latencies in ms (default 0,50)
//   BENCH_REMOTE_PROVIDERS   docker,e2b (the default) or one of them
//   BENCH_REMOTE_SUPERVISORS python3,static (the default), or any of
//                            python3, static and auto: the instances'
//                            "supervisor", set explicitly; static (and
//                            auto's static) needs taskbox-supervisor-static
//                            beside TASKBOX_BIN
//   BENCH_RESULTS            where to write remote.md and remote.json
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { benchSupervisors, cellRuns, closeCells, copyTaskbox, fileStamp, isoSeconds, list, removeScratch, runMain, watchMachine } from "./lib/providerbench.mjs";
import { TASK_LIMIT, manyFromEnv, manyWaitsCells } from "./lib/manywaits.mjs";
import { OPS, REMOTE_SLEEP, WAKE, WAKE_SEEN, setupCell, timeCalls, timeWakeUps } from "./lib/remoteload.mjs";
import { writeRemoteResults } from "./lib/remotereport.mjs";
import { startEngine, startFakes, stopEngine } from "./lib/remotesetup.mjs";
import { reapLeftovers } from "./lib/rounds.mjs";
import { connectTaskbox } from "./lib/servers.mjs";
import { quantile } from "./lib/stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const log = (msg) => process.stderr.write(`bench remote: ${msg}\n`);
// The warm-up run: enough calls to warm every path and to set the wake-up
// tasks' sleep.
const LIGHT = { calls: 2, starts: 2, waits: 1 };
// The "watches" of the e2b instances that compare with the default.
const CAPPED = 16;

// A cell's instance name: provider-latency, and -static or -auto for those
// supervisors (python3 has none).
const cellInstance = (provider, ms, supervisor) => `${provider}-${ms}${supervisor === "python3" ? "" : `-${supervisor}`}`;

async function main() {
  const srcBin = process.env.TASKBOX_BIN;
  if (!srcBin) throw new Error("TASKBOX_BIN is not set: run bench/run.sh");
  const runs = Number(process.env.BENCH_REMOTE_RUNS || 3);
  const n = Number(process.env.BENCH_REMOTE_CALLS || 6);
  const m = Number(process.env.BENCH_REMOTE_STARTS || 3);
  const waits = Number(process.env.BENCH_REMOTE_WAITS || 3);
  const many = manyFromEnv("BENCH_REMOTE_MANY");
  const latencies = list(process.env.BENCH_REMOTE_LATENCIES, "0,50").map(Number);
  const providers = list(process.env.BENCH_REMOTE_PROVIDERS, "docker,e2b");
  for (const p of providers) if (p !== "docker" && p !== "e2b") throw new Error(`BENCH_REMOTE_PROVIDERS: ${p}: docker or e2b`);
  if (latencies.some((x) => !Number.isInteger(x) || x < 0)) throw new Error("BENCH_REMOTE_LATENCIES: whole numbers of ms");
  const perSandbox = 2 + LIGHT.starts + LIGHT.waits + runs * (m + waits) + 2 * many;
  if (perSandbox > TASK_LIMIT) throw new Error(`${perSandbox} tasks per sandbox would pass ${TASK_LIMIT}: fewer runs, starts, waits or waits at once`);
  const results = process.env.BENCH_RESULTS || join(here, "results");
  const scratch = mkdtempSync(join(tmpdir(), "taskbox-bench-remote-"));
  const notes = [];

  const { bin, stamp } = copyTaskbox(srcBin, scratch);
  const supervisors = benchSupervisors("BENCH_REMOTE_SUPERVISORS", srcBin, scratch, stamp, notes);
  const plugins = {};
  for (const dir of (process.env.TASKBOX_PLUGIN_PATH || "").split(":").filter(Boolean))
    for (const p of providers)
      try {
        plugins[p] ||= fileStamp(join(dir, `${p}.so`));
      } catch {
        // not in this dir
      }

  const machine = watchMachine();
  const engineDir = join(scratch, "engine");
  let engine = null;
  let fakes = null;
  let tb = null;
  const cells = [];
  const capped = [];
  let manyOut = [];
  let runsOut = [];
  const wakeSleep = {};
  let setupSeconds = NaN;
  try {
    // --- the backends ----------------------------------------------------
    const providerConfig = {};
    if (providers.includes("docker")) {
      const ts = performance.now();
      engine = startEngine(engineDir, latencies);
      if (!engine) notes.push("no container engine could run here (engine.sh exit 77): docker not measured");
      else {
        log(`engine up in ${((performance.now() - ts) / 1000).toFixed(1)} s`);
        for (const ms of latencies)
          for (const supervisor of supervisors) {
            const instance = cellInstance("docker", ms, supervisor);
            providerConfig[instance] = { plugin: "docker", supervisor, settings: { host: engine.hosts[ms], image: engine.image } };
            cells.push({ provider: "docker", latency: ms, supervisor, instance, host: engine.hosts[ms] });
          }
      }
    }
    if (providers.includes("e2b")) {
      fakes = await startFakes(latencies);
      for (const ms of latencies)
        for (const supervisor of supervisors) {
          const instance = cellInstance("e2b", ms, supervisor);
          const fake = fakes.fakes[ms];
          providerConfig[instance] = { plugin: "e2b", supervisor, settings: { api_url: fake.apiUrl, sandbox_url: fake.sandboxUrl } };
          cells.push({ provider: "e2b", latency: ms, supervisor, instance, fake });
        }
      if (many > CAPPED)
        for (const ms of latencies) {
          const instance = `e2b-${ms}-w${CAPPED}`;
          const fake = fakes.fakes[ms];
          providerConfig[instance] = { plugin: "e2b", supervisor: "python3", watches: CAPPED, settings: { api_url: fake.apiUrl, sandbox_url: fake.sandboxUrl } };
          capped.push({ provider: "e2b", latency: ms, supervisor: "python3", instance, fake, watches: CAPPED, tasks: 0 });
        }
    }
    if (!cells.length) throw new Error("nothing to measure");
    mkdirSync(join(scratch, "config"), { recursive: true });
    const cfgPath = join(scratch, "config", "remote.json");
    writeFileSync(cfgPath, JSON.stringify({ default: cells[0].instance, providers: providerConfig }, null, 2));
    tb = await connectTaskbox(bin, join(scratch, "state"), { TASKBOX_CONFIG: cfgPath, ...(fakes ? { E2B_API_KEY: fakes.apiKey } : {}) });
    for (const cell of cells) {
      const ts = performance.now();
      await setupCell(tb, cell);
      log(`${cell.instance}: sandbox ${cell.sandbox_id.slice(0, 12)} ready in ${((performance.now() - ts) / 1000).toFixed(1)} s`);
    }
    setupSeconds = machine.elapsed();

    // --- the runs ----------------------------------------------------------
    runsOut = await cellRuns({
      runs,
      cells,
      ops: [...OPS, WAKE, WAKE_SEEN],
      log,
      measure: async (cell, rec, light) => {
        await timeCalls(tb, cell, rec, light ? LIGHT.calls : n, light ? LIGHT.starts : m);
        if (light) {
          // The wake-up tasks sleep long enough for start_task to return,
          // the get_task's first check to be over and its watch (an exec,
          // about a run_command) to be running before they exit.
          const ms =
            quantile(rec.samples.start_task, 0.5) +
            quantile(rec.samples["get_task (running)"], 0.5) +
            quantile(rec.samples.run_command, 0.5);
          wakeSleep[cell.instance] = Math.min(5, Math.max(0.3, Math.ceil((0.2 + ms / 1000) * 10) / 10));
        }
        await timeWakeUps(tb, cell, rec, light ? LIGHT.waits : waits, wakeSleep[cell.instance]);
      },
      describe: (c, f) => `${c.instance} get_task ${f(c, "get_task (running)").toFixed(1)} / baseline ${f(c, "baseline").toFixed(1)} ms, wake ${f(c, WAKE).toFixed(0)} ms`,
    });

    // --- many waits at once --------------------------------------------------
    if (many > 0) manyOut = await manyWaitsCells(tb, [...cells, ...capped], many, log);
  } finally {
    machine.stop();
    await closeCells(tb, [...cells, ...capped], log);
    for (const c of cells) c.baseline?.close();
    if (fakes) for (const f of Object.values(fakes.fakes)) await f.stop();
    if (engine) stopEngine(engineDir);
    await reapLeftovers(REMOTE_SLEEP);
    removeScratch(scratch, log);
  }

  const meta = {
    date: isoSeconds(new Date()),
    runs,
    calls: n,
    starts: m,
    waits,
    many,
    light: LIGHT,
    latencies,
    supervisors,
    cells: cells.map((c) => ({ instance: c.instance, provider: c.provider, latency: c.latency, supervisor: c.supervisor, baseline: c.baseline?.what, wakeSleep: wakeSleep[c.instance], tasks: c.tasks })),
    ...stamp,
    plugins,
    podman: engine ? execFileSync("podman", ["--version"], { encoding: "utf8" }).trim() : null,
    ...machine.meta(setupSeconds),
    notes,
  };
  writeRemoteResults(results, meta, runsOut, manyOut);
  log(`wrote ${join(results, "remote.md")} in ${meta.seconds.toFixed(0)} s`);
}

runMain(main, log, "remote");
