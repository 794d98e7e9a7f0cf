// The HTTP benchmark: taskbox's Streamable HTTP transport beside the peer a
// user would otherwise write (the official TypeScript SDK's own Streamable
// HTTP server, bench/peer/server.mjs), with the load client's own ceiling
// measured in the same run; then the cost of parked waits over HTTP and
// over stdio. Run it through bench/run.sh (BENCH_ONLY=http runs this part
// alone).
//
// Environment:
//   TASKBOX_BIN          the taskbox binary (required)
//   TASKBOX_PLUGIN_PATH  passed on to taskbox (the build's plugin dirs)
//   BENCH_HTTP_RUNS      measured runs of the load matrix after a warm-up (default 3)
//   BENCH_HTTP_WAITS     parked waits (default 1000)
//   BENCH_RESULTS        where to write the results (default: bench/results)
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { HttpSession, connection } from "./lib/httpclient.mjs";
import { CONCURRENCY, cell, closeTarget, target } from "./lib/httpload.mjs";
import { listenFixed, listenHeld, listenPeer, listenTaskbox } from "./lib/httpservers.mjs";
import { writeHttpResults } from "./lib/httpreport.mjs";
import { PARK_SLEEP, heldFloor, httpApi, parkedWaits, singleWaits, stdioApi } from "./lib/parked.mjs";
import { cpuTicks, loadAverage, machineTicks } from "./lib/procfs.mjs";
import { rawStdio } from "./lib/rawstdio.mjs";
import { reapLeftovers, waitFor } from "./lib/rounds.mjs";
import { SYSTEM_PATH } from "./lib/servers.mjs";
import { quantile } from "./lib/stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const log = (msg) => process.stderr.write(`bench http: ${msg}\n`);
const OPS = ["ping", "get_task (running)", "get_task (finished)"];
const RUNNING_TASKS = 16;
// Marker commands (durations nothing else uses), reaped at the end.
const TB_LOAD_SLEEP = ["sleep", "2992"];
const PEER_SLEEP = ["sleep", "2991"];

// The cells of one run: every op at every concurrency with one session per
// connection, and at 64 connections sharing one session.
const CELLS = [
  ...OPS.flatMap((op) => CONCURRENCY.map((c) => ({ op, c, shared: false }))),
  { op: "ping", c: 64, shared: true },
  { op: "get_task (running)", c: 64, shared: true },
];
export const cellName = (op, c, shared) => `${op}, ${c} conn${shared ? ", 1 session" : ""}`;

// Does this tree park waiting calls without a thread?
function parkingInTree() {
  const dirs = ["core/tools", "core/protocol"].map((d) => join(here, "..", d));
  for (const d of dirs) {
    if (!existsSync(d)) continue;
    for (const f of readdirSync(d))
      if (f.endsWith(".c") && readFileSync(join(d, f), "utf8").includes("tb_parker_add")) return true;
  }
  return false;
}

// taskbox's sandbox with RUNNING_TASKS running tasks and a finished one,
// made through a session kept open for the whole load part.
async function taskboxTasks(server, token) {
  const conn = connection(new URL(server.url).origin);
  const s = new HttpSession(server.url, token);
  await s.open(conn);
  const sb = (await s.call(conn, "create_sandbox", { timeout: 3600 })).sandbox_id;
  const running = [];
  for (let i = 0; i < RUNNING_TASKS; i++) {
    const r = await s.call(conn, "start_task", { sandbox_id: sb, command: `echo ready; exec ${TB_LOAD_SLEEP.join(" ")}`, timeout: 3600 });
    running.push(JSON.stringify({ sandbox_id: sb, task_id: r.task_id, stdout_offset: 0, stderr_offset: 0, limit: 16384 }));
  }
  const done = await s.call(conn, "start_task", { sandbox_id: sb, command: "echo done", timeout: 60 });
  const finished = { sandbox_id: sb, task_id: done.task_id, stdout_offset: 0, stderr_offset: 0, limit: 16384 };
  await waitFor("a finished task", async () => (await s.call(conn, "get_task", finished)).state === "succeeded");
  // let the running ones print their line
  await waitFor("the running tasks' output", async () => (await s.call(conn, "get_task", JSON.parse(running.at(-1)))).stdout === "ready\n");
  return {
    tasks: { running, finished: JSON.stringify(finished) },
    close: async () => {
      await s.call(conn, "kill_sandbox", { sandbox_id: sb }).catch(() => {});
      await s.close(conn);
      await conn.close();
    },
  };
}

// The peer's tasks: directories with a status file and logs, the running
// ones with a live process of their own.
function peerTasks(root) {
  const kids = [];
  const id = () => randomBytes(16).toString("hex");
  const now = Math.floor(Date.now() / 1000);
  const write = (tid, status, stdout) => {
    mkdirSync(join(root, tid), { recursive: true });
    writeFileSync(join(root, tid, "status.json"), JSON.stringify(status));
    writeFileSync(join(root, tid, "stdout"), stdout);
    writeFileSync(join(root, tid, "stderr"), "");
  };
  const running = [];
  for (let i = 0; i < RUNNING_TASKS; i++) {
    const kid = spawn(PEER_SLEEP[0], PEER_SLEEP.slice(1), { stdio: "ignore", env: { PATH: SYSTEM_PATH } });
    kids.push(kid);
    const tid = id();
    const command = `echo ready; exec ${PEER_SLEEP.join(" ")}`;
    write(tid, { state: "running", pid: kid.pid, exit_code: null, started_at: now, finished_at: null, command, error: null }, "ready\n");
    running.push(JSON.stringify({ sandbox_id: "peer:local", task_id: tid, stdout_offset: 0, stderr_offset: 0, limit: 16384 }));
  }
  const tid = id();
  write(tid, { state: "succeeded", pid: 0, exit_code: 0, started_at: now, finished_at: now, command: "echo done", error: null }, "done\n");
  return {
    tasks: { running, finished: JSON.stringify({ sandbox_id: "peer:local", task_id: tid, stdout_offset: 0, stderr_offset: 0, limit: 16384 }) },
    close: async () => kids.forEach((k) => k.kill("SIGKILL")),
  };
}

// One run of the load matrix; run 0 is the warm-up (shorter windows).
async function loadRun(i, parties, measureMs) {
  const figures = {};
  const samples = {};
  for (const [ci, { op, c, shared }] of CELLS.entries()) {
    let order = parties.filter((p) => p.name !== "fixed");
    if ((i + ci) % 2) order = order.reverse();
    if (op === "ping" && !shared) order = [parties.find((p) => p.name === "fixed"), ...order].filter(Boolean);
    for (const p of order) {
      const r = await cell(p.target, op, c, { shared, measureMs, tasks: p.tasks });
      const key = `${p.name} ${cellName(op, c, shared)}`;
      if (r.errors) log(`${key}: ${r.errors} errors, first: ${r.firstError}`);
      figures[key] = {
        p50: quantile(r.samples, 0.5),
        p99: quantile(r.samples, 0.99),
        rps: r.rps,
        serverUs: r.serverUsPerReq,
        serverCpu: r.serverCpuPct,
        clientCpu: r.clientCpuPct,
        errors: r.errors,
      };
      samples[key] = r.samples;
    }
  }
  return { figures, samples };
}

async function main() {
  const bin = process.env.TASKBOX_BIN;
  if (!bin) throw new Error("TASKBOX_BIN is not set: run bench/run.sh");
  const runs = Number(process.env.BENCH_HTTP_RUNS || 3);
  const nWaits = Number(process.env.BENCH_HTTP_WAITS || 1000);
  const results = process.env.BENCH_RESULTS || join(here, "results");
  const scratch = mkdtempSync(join(tmpdir(), "taskbox-bench-http-"));
  const token = randomBytes(16).toString("hex");
  const notes = [];
  const t0 = performance.now();
  const ticks0 = machineTicks();
  const cpu0 = process.cpuUsage();
  const loadStart = loadAverage();
  const parking = parkingInTree();
  let version = "(unknown)";
  try {
    version = execFileSync(bin, ["--version"], { encoding: "utf8" }).trim().replace(/^taskbox\s*/, "");
  } catch {
    /* reported as unknown */
  }
  const ourTicks = []; // CPU ticks of the servers this part started
  const stopServer = async (s) => {
    if (!s) return;
    ourTicks.push(cpuTicks(s.pid));
    await s.stop();
  };

  // The servers and their tasks.
  const peerRoot = join(scratch, "peer-tasks");
  const parties = [];
  const closers = [];
  const servers = [];
  let tbOk = false;
  const runsOut = [];
  const waits = {};
  try {
    const fixed = await listenFixed();
    servers.push(fixed);
    parties.push({ name: "fixed", target: await target(fixed, null), tasks: null });
    const pt = peerTasks(peerRoot);
    closers.push(pt.close);
    const peer = await listenPeer(peerRoot, token);
    servers.push(peer);
    parties.push({ name: "peer", target: await target(peer, token), tasks: pt.tasks });
    try {
      const tb = await listenTaskbox(bin, join(scratch, "taskbox"), token);
      servers.push(tb);
      const tt = await taskboxTasks(tb, token);
      closers.unshift(tt.close);
      parties.push({ name: "taskbox", target: await target(tb, token), tasks: tt.tasks });
      tbOk = true;
    } catch (e) {
      notes.push(`taskbox over HTTP did not start or answer, none of its HTTP figures are measured: ${e.message.split("\n")[0]}`);
      log(notes.at(-1));
    }
    log(`servers up: ${parties.map((p) => p.name).join(", ")}; parking in this tree: ${parking ? "yes" : "no"}`);

    for (let i = 0; i <= runs; i++) {
      const ts = performance.now();
      const run = await loadRun(i, parties, i === 0 ? 300 : 1000);
      if (i > 0) runsOut.push(run);
      const f = run.figures;
      const g = (k, m) => f[k]?.[m];
      log(`${i === 0 ? "warm-up" : `run ${i}/${runs}`} (${((performance.now() - ts) / 1000).toFixed(1)} s): ` +
        `ping c=64 req/s taskbox ${g("taskbox ping, 64 conn", "rps")?.toFixed(0)} peer ${g("peer ping, 64 conn", "rps")?.toFixed(0)} ` +
        `ceiling ${g("fixed ping, 64 conn", "rps")?.toFixed(0)}; load ${loadAverage()[0]}`);
    }
  } finally {
    for (const p of parties) await closeTarget(p.target).catch(() => {});
    for (const c of closers) await c().catch(() => {});
    for (const s of servers) await stopServer(s);
  }

  // Parked waits: over HTTP (a fresh server as it comes, then one with
  // room for them all), then over stdio.
  const httpWaits = [
    ["http", [], true],
    ["httpSized", ["--workers", String(Math.ceil((nWaits + 64) / 32))], false],
  ];
  for (const [key, args, single] of tbOk ? httpWaits : []) {
    let srv = null;
    let api = null;
    try {
      srv = await listenTaskbox(bin, join(scratch, `taskbox-${key}`), token, args);
      api = await httpApi(srv, token);
      const ts = performance.now();
      if (single) {
        waits.singleHttp = await singleWaits(api, 20);
        log(`single waits over HTTP: p50 ${quantile(waits.singleHttp, 0.5).toFixed(2)} ms`);
      }
      waits[key] = { args: args.join(" "), ...(await parkedWaits(api, { n: nWaits, log })) };
      log(`parked waits over HTTP ${args.join(" ")} (${((performance.now() - ts) / 1000).toFixed(1)} s): ${JSON.stringify(waits[key])}`);
    } catch (e) {
      notes.push(`parked waits over HTTP ${args.join(" ")} failed: ${e.message.split("\n")[0]}`);
      log(notes.at(-1));
    } finally {
      await api?.close().catch(() => {});
      await stopServer(srv);
    }
  }
  // The load client's floor for that burst: the same calls, held by a
  // trivial server and released as the first HTTP run's tasks ended.
  if (waits.http?.exitOffsetsMs) {
    let srv = null;
    try {
      srv = await listenHeld();
      waits.floor = await heldFloor(srv, nWaits, waits.http.exitOffsetsMs);
      log(`the client's floor for the burst: ${JSON.stringify(waits.floor)}`);
    } catch (e) {
      notes.push(`the client's floor for the burst failed: ${e.message.split("\n")[0]}`);
      log(notes.at(-1));
    } finally {
      await stopServer(srv);
    }
  }
  {
    let cl = null;
    try {
      const state = join(scratch, "taskbox-stdio");
      const env = {
        PATH: SYSTEM_PATH,
        HOME: state,
        XDG_STATE_HOME: join(state, "state"),
        XDG_CONFIG_HOME: join(state, "config"),
        ...(process.env.TASKBOX_PLUGIN_PATH ? { TASKBOX_PLUGIN_PATH: process.env.TASKBOX_PLUGIN_PATH } : {}),
      };
      cl = await rawStdio([bin, "serve"], env);
      const ts = performance.now();
      waits.stdio = await parkedWaits(stdioApi(cl), { n: nWaits, log });
      log(`parked waits over stdio (${((performance.now() - ts) / 1000).toFixed(1)} s): ${JSON.stringify(waits.stdio)}`);
    } catch (e) {
      notes.push(`parked waits over stdio failed: ${e.message.split("\n")[0]}`);
      log(notes.at(-1));
    } finally {
      if (cl) {
        ourTicks.push(cpuTicks(cl.pid));
        await cl.close().catch(() => {});
      }
    }
  }
  for (const argv of [TB_LOAD_SLEEP, PEER_SLEEP, PARK_SLEEP]) await reapLeftovers(argv);

  const ticks1 = machineTicks();
  const cpu = process.cpuUsage(cpu0);
  const busy = ticks1.busy - ticks0.busy;
  const total = ticks1.total - ticks0.total;
  const ours = ourTicks.filter(Number.isFinite).reduce((a, b) => a + b, 0) + ((cpu.user + cpu.system) / 1e6) * 100;
  const meta = {
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    runs,
    taskboxVersion: version,
    parking,
    sdk: JSON.parse(readFileSync(join(here, "node_modules/@modelcontextprotocol/sdk/package.json"), "utf8")).version,
    undici: JSON.parse(readFileSync(join(here, "node_modules/undici/package.json"), "utf8")).version,
    loadStart,
    loadEnd: loadAverage(),
    busyPercent: (100 * busy) / total,
    othersPercent: (100 * Math.max(0, busy - ours)) / total,
    seconds: (performance.now() - t0) / 1000,
    waits: nWaits,
    notes,
  };
  writeHttpResults(results, meta, runsOut, waits);
  try {
    rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
  } catch (e) {
    log(`could not remove ${scratch}: ${e.message}`);
  }
  log(`wrote ${join(results, "RESULTS.md")} (HTTP section) in ${meta.seconds.toFixed(0)} s`);
}

main().then(
  () => process.exit(0),
  (e) => {
    log(`failed: ${e.stack || e}`);
    process.exit(1);
  },
);
