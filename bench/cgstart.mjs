// start_task on the local provider with two builds of its plugin, measured
// in the same run: how much making a task's first process inside its
// sandbox's cgroup (clone3 with CLONE_INTO_CGROUP) saves against moving it
// there (a write to cgroup.procs). Node built-ins only.
//
//   TASKBOX_BIN=.../taskbox BENCH_CGSTART_BEFORE=DIR BENCH_CGSTART_AFTER=DIR \
//     node bench/cgstart.mjs
//
// BENCH_CGSTART_BEFORE and _AFTER are directories holding a built local
// plugin (local.so); one taskbox serve runs on each (TASKBOX_PLUGIN_PATH),
// same binary, a state directory each. Each run makes a new sandbox on
// each (one holds at most 128 tasks) and fails when they have no cgroup
// (nothing would be measured).
// Per run, blocks of BENCH_CGSTART_BLOCK (4) start_tasks of `true` take
// turns between the two servers and a `sh -c true` spawn (the reference of
// issue 38's local budget), the side going first swapped each run;
// BENCH_CGSTART_RUNS (7) runs of BENCH_CGSTART_STARTS (40) starts per side
// after a warm-up run of a quarter of that. BENCH_CGSTART_GAP_MS (0) waits
// that long, untimed, before each call: a cgroup migration waits for an
// RCU grace period only when no other migration happened in the last one,
// so back-to-back starts hide what a start after a quiet spell pays.
// Latency is performance.now()
// around each call in this client. Prints a JSON record (BENCH_CGSTART_OUT
// writes it to a file too): per run and side p50 and p99, the after/before
// ratios per run, their median, and the load average before and after.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { quantile, summary } from "./lib/stats.mjs";

const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const env = process.env;
const bin = env.TASKBOX_BIN;
const dirs = { before: env.BENCH_CGSTART_BEFORE, after: env.BENCH_CGSTART_AFTER };
const RUNS = Number(env.BENCH_CGSTART_RUNS || 7);
const STARTS = Number(env.BENCH_CGSTART_STARTS || 40);
const BLOCK = Number(env.BENCH_CGSTART_BLOCK || 4);
const GAP_MS = Number(env.BENCH_CGSTART_GAP_MS || 0);
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

if (!bin || !dirs.before || !dirs.after) {
  console.error("cgstart: set TASKBOX_BIN, BENCH_CGSTART_BEFORE and BENCH_CGSTART_AFTER");
  process.exit(2);
}

// A taskbox serve on stdio with the plugin of pluginDir: newline-delimited
// JSON-RPC, one request at a time.
async function server(pluginDir, state) {
  const child = spawn(bin, ["serve"], {
    env: { PATH: SYSTEM_PATH, HOME: state, XDG_STATE_HOME: join(state, "state"), XDG_CONFIG_HOME: join(state, "config"), TASKBOX_PLUGIN_PATH: pluginDir },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
  const pending = new Map();
  let buf = "";
  let next = 1;
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => {
    buf += d;
    for (let i; (i = buf.indexOf("\n")) >= 0; ) {
      const m = JSON.parse(buf.slice(0, i));
      buf = buf.slice(i + 1);
      const p = pending.get(m.id);
      if (!p) continue;
      pending.delete(m.id);
      m.error ? p.reject(new Error(`${m.error.message} ${stderr}`)) : p.resolve(m.result);
    }
  });
  child.once("exit", () => {
    for (const p of pending.values()) p.reject(new Error(`taskbox exited: ${stderr}`));
  });
  const send = (m) => child.stdin.write(JSON.stringify(m) + "\n");
  const rpc = (method, params) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      send({ jsonrpc: "2.0", id, method, params });
    });
  await rpc("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "taskbox-bench-cgstart", version: "1" } });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return {
    state,
    async call(name, args) {
      const r = await rpc("tools/call", { name, arguments: args });
      if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
      return r.structuredContent || JSON.parse(r.content[0].text);
    },
    close() {
      child.stdin.end();
      return new Promise((r) => child.once("exit", r));
    },
  };
}

// Spawns sh -c true and resolves at its exit.
const shTrue = () =>
  new Promise((resolve, reject) => {
    const c = spawn("/bin/sh", ["-c", "true"], { stdio: "ignore", env: { PATH: SYSTEM_PATH } });
    c.on("error", reject);
    c.on("exit", resolve);
  });

const loadavg = () => readFileSync("/proc/loadavg", "utf8").trim();

const sides = {};
for (const side of ["before", "after"])
  sides[side] = { tb: await server(dirs[side], mkdtempSync(join(tmpdir(), `tb-cgstart-${side}-`))) };

// A new sandbox on each side (a sandbox holds at most 128 tasks).
async function fresh() {
  for (const [side, s] of Object.entries(sides)) {
    const { sandbox_id } = await s.tb.call("create_sandbox", { timeout: 3600 });
    s.sandbox_id = sandbox_id;
    const record = join(s.tb.state, "state", "taskbox", "local", `.cgroup-${sandbox_id.split(":").pop()}`);
    if (!existsSync(record)) throw new Error(`${side}: the sandbox has no cgroup (${record}): nothing to measure`);
    s.group = readFileSync(record, "utf8");
  }
}

async function drop() {
  for (const s of Object.values(sides))
    if (s.sandbox_id) {
      await s.tb.call("kill_sandbox", { sandbox_id: s.sandbox_id }).catch(() => {});
      s.sandbox_id = null;
    }
}

// One run: n starts per side in blocks, taking turns with sh -c true.
async function run(n, first) {
  await fresh();
  const order = first === "before" ? ["before", "after", "sh"] : ["after", "before", "sh"];
  const lat = { before: [], after: [], sh: [] };
  for (let done = 0; done < n; done += BLOCK)
    for (const who of order)
      for (let i = 0; i < BLOCK; i++) {
        if (GAP_MS) await pause(GAP_MS);
        const t0 = performance.now();
        if (who === "sh") await shTrue();
        else await sides[who].tb.call("start_task", { sandbox_id: sides[who].sandbox_id, command: "true", timeout: 60 });
        lat[who].push(performance.now() - t0);
      }
  await drop();
  return lat;
}

try {
  const load = { start: loadavg() };
  const t0 = Date.now();
  await run(Math.max(BLOCK, STARTS / 4), "after");
  const runs = [];
  for (let r = 0; r < RUNS; r++) {
    const lat = await run(STARTS, r % 2 ? "after" : "before");
    const fig = {};
    for (const k of Object.keys(lat)) fig[k] = { p50: quantile(lat[k], 0.5), p99: quantile(lat[k], 0.99), n: lat[k].length };
    fig.ratio_p50 = fig.after.p50 / fig.before.p50;
    fig.ratio_p99 = fig.after.p99 / fig.before.p99;
    fig.after_p99_over_sh_p50 = fig.after.p99 / fig.sh.p50;
    runs.push(fig);
    console.error(`cgstart: run ${r + 1}: before p50 ${fig.before.p50.toFixed(2)} ms, after ${fig.after.p50.toFixed(2)} ms, ratio ${fig.ratio_p50.toFixed(3)}; sh -c true ${fig.sh.p50.toFixed(2)} ms`);
  }
  load.end = loadavg();
  const out = {
    when: new Date().toISOString(),
    seconds: (Date.now() - t0) / 1000,
    runs: RUNS,
    starts_per_side_and_run: STARTS,
    block: BLOCK,
    gap_ms: GAP_MS,
    loadavg: load,
    per_run: runs,
    ratio_p50: summary(runs.map((f) => f.ratio_p50)),
    ratio_p99: summary(runs.map((f) => f.ratio_p99)),
    before_p50_ms: summary(runs.map((f) => f.before.p50)),
    after_p50_ms: summary(runs.map((f) => f.after.p50)),
    sh_p50_ms: summary(runs.map((f) => f.sh.p50)),
    after_p99_over_sh_p50: summary(runs.map((f) => f.after_p99_over_sh_p50)),
  };
  const text = JSON.stringify(out, null, 2);
  if (env.BENCH_CGSTART_OUT) writeFileSync(env.BENCH_CGSTART_OUT, text + "\n");
  console.log(text);
} finally {
  await drop();
  for (const s of Object.values(sides)) {
    await s.tb.close();
    rmSync(s.tb.state, { recursive: true, force: true });
  }
}
