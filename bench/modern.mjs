// The modern-era benchmark: what MCP 2026-07-28's envelope costs against a
// legacy session on the same binary in the same run, and what a balancer
// in front of replicas costs against going to a replica direct.
//
//  1. stdio: get_task on a running task from a legacy process (initialize
//     first) and from a modern one (its first line a modern request),
//     sequential calls interleaved in chunks; ping-like baseline: legacy
//     `ping` against modern `server/discover`.
//  2. HTTP direct: the same, legacy in a session against modern raw POSTs
//     (envelope + MCP-Protocol-Version, Mcp-Method, Mcp-Name), on kept-alive
//     connections, at 1 and 4 connections, in alternating slices.
//  3. HTTP through haproxy (one replica behind it; three replicas round
//     robin on one state directory) against direct to a replica: modern
//     get_task and server/discover, in alternating slices.
//
// Every ratio is taken inside one run against the baseline measured in the
// same run, then summarised across runs as median (min–max). Run it through
// bench/run.sh (BENCH_ONLY=modern runs this part alone).
//
// Environment:
//   TASKBOX_BIN          the taskbox binary (required; copied to a scratch
//                        directory first, so a rebuild meanwhile cannot
//                        change what is measured)
//   TASKBOX_PLUGIN_PATH  passed on to taskbox (the build's plugin dirs)
//   BENCH_MODERN_RUNS    measured runs after a warm-up (default 3)
//   BENCH_MODERN_CALLS   sequential stdio calls per side, op and run (default 2000)
//   BENCH_MODERN_SLICES  alternating slices per HTTP cell (default 4; 500 ms measured each)
//   BENCH_MODERN_PROFILE 1 (the default when valgrind is installed): after the
//                        runs, count each case's instructions per request
//                        under callgrind (bench/lib/modernprofile.mjs); 0: skip
//   BENCH_RESULTS        where to write modern.md and modern.json (default: bench/results)
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { HttpSession, connection } from "./lib/httpclient.mjs";
import { listenTaskbox } from "./lib/httpservers.mjs";
import {
  META,
  alternate,
  checkModern,
  enveloped,
  haproxyVersion,
  interleaveCalls,
  legacyRequest,
  modernRequest,
  newStats,
  startBalancer,
  toolCalls,
} from "./lib/modernload.mjs";
import { PROFILE_N, profileEnvelope, valgrindFound } from "./lib/modernprofile.mjs";
import { writeModernResults } from "./lib/modernreport.mjs";
import { cpuTicks, loadAverage, machineTicks } from "./lib/procfs.mjs";
import { rawStdio } from "./lib/rawstdio.mjs";
import { reapLeftovers, waitFor } from "./lib/rounds.mjs";
import { taskboxEnv } from "./lib/servers.mjs";
import { quantile } from "./lib/stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const log = (msg) => process.stderr.write(`bench modern: ${msg}\n`);
// The running task: a sleep with a duration nothing else uses (reaped at
// the end should the sandbox's kill miss it).
const TASK_SLEEP = ["sleep", "2988"];
const CONNS = [1, 4];
const OPS = ["baseline", "get_task"];

async function main() {
  const srcBin = process.env.TASKBOX_BIN;
  if (!srcBin) throw new Error("TASKBOX_BIN is not set: run bench/run.sh");
  const runs = Number(process.env.BENCH_MODERN_RUNS || 3);
  const calls = Number(process.env.BENCH_MODERN_CALLS || 2000);
  const slices = Number(process.env.BENCH_MODERN_SLICES || 4);
  const profile = (process.env.BENCH_MODERN_PROFILE ?? (valgrindFound() ? "1" : "0")) !== "0";
  const results = process.env.BENCH_RESULTS || join(here, "results");
  const scratch = mkdtempSync(join(tmpdir(), "taskbox-bench-modern-"));
  const token = randomBytes(16).toString("hex");
  const notes = [];

  // The binary, copied: every process of this run is the same file.
  const bin = join(scratch, "taskbox");
  copyFileSync(srcBin, bin);
  const sha256 = createHash("sha256").update(readFileSync(bin)).digest("hex");
  const binMtime = statSync(srcBin).mtime.toISOString().replace(/\.\d+Z$/, "Z");
  const version = execFileSync(bin, ["--version"], { encoding: "utf8" }).trim().replace(/^taskbox\s*/, "");
  const stateDir = join(scratch, "state");
  const env = taskboxEnv(stateDir);

  const t0 = performance.now();
  const ticks0 = machineTicks();
  const loadStart = loadAverage();
  const loadSamples = [];
  const sampler = setInterval(() => loadSamples.push(loadAverage()[0]), 2000);
  const ourPids = []; // every server process this run started
  const ourTicks = () => ourPids.map(cpuTicks).filter(Number.isFinite).reduce((a, b) => a + b, 0) +
    ((({ user, system }) => user + system)(process.cpuUsage()) / 1e6) * 100;

  const closers = [];
  const runsOut = [];
  const sizes = {};
  let spread = null;
  let instructions = null;
  let timed = null; // the machine's ticks and ours, once the timed runs are done
  const our0All = ourTicks();
  try {
    // --- setup: one sandbox, one running task, on one state directory --
    const legacyStdio = await rawStdio([bin, "serve"], env);
    closers.unshift(() => legacyStdio.close());
    ourPids.push(legacyStdio.pid);
    const sb = (await legacyStdio.call("create_sandbox", { timeout: 3600 })).sandbox_id;
    closers.unshift(() => legacyStdio.call("kill_sandbox", { sandbox_id: sb }));
    const task = await legacyStdio.call("start_task", { sandbox_id: sb, command: `echo ready; exec ${TASK_SLEEP.join(" ")}`, timeout: 3600 });
    const args = { sandbox_id: sb, task_id: task.task_id };
    await waitFor("the task's first line", async () => (await legacyStdio.call("get_task", args)).stdout === "ready\n");
    const getTask = { name: "get_task", arguments: args };
    const running = (r) => {
      const v = r.structuredContent || JSON.parse(r.content?.[0]?.text || "{}");
      if (v.state !== "running") throw new Error(`get_task: state ${v.state}, not running: ${JSON.stringify(r).slice(0, 300)}`);
    };

    // stdio: the legacy process above (initialize was its first line) and
    // a modern one whose first line is a modern get_task.
    const modernStdio = await rawStdio([bin, "serve"], env, { initialize: false });
    closers.unshift(() => modernStdio.close());
    ourPids.push(modernStdio.pid);
    {
      const r = await modernStdio.rpc("tools/call", enveloped(getTask));
      checkModern("tools/call", r);
      running(r);
      const d = await modernStdio.rpc("server/discover", enveloped());
      checkModern("server/discover", d);
      // the wire: the exact lines each side sends, and what comes back
      const line = (method, params) => JSON.stringify({ jsonrpc: "2.0", id: 1000, method, ...(params ? { params } : {}) }).length + 1;
      const answer = (result) => JSON.stringify({ jsonrpc: "2.0", id: 1000, result }).length + 1;
      const lr = await legacyStdio.rpc("tools/call", getTask);
      const lp = await legacyStdio.rpc("ping");
      sizes.stdio = {
        "get_task legacy": [line("tools/call", getTask), answer(lr)],
        "get_task modern": [line("tools/call", enveloped(getTask)), answer(r)],
        "ping (legacy)": [line("ping"), answer(lp)],
        "server/discover (modern)": [line("server/discover", enveloped()), answer(d)],
      };
    }
    const stdioParties = {
      baseline: [
        { name: "legacy", pids: [legacyStdio.pid], call: () => legacyStdio.rpc("ping") },
        { name: "modern", pids: [modernStdio.pid], call: async () => checkModern("server/discover", await modernStdio.rpc("server/discover", { _meta: META })) },
      ],
      get_task: [
        { name: "legacy", pids: [legacyStdio.pid], call: async () => running(await legacyStdio.rpc("tools/call", getTask)) },
        {
          name: "modern",
          pids: [modernStdio.pid],
          call: async () => {
            const r = await modernStdio.rpc("tools/call", { ...getTask, _meta: META });
            checkModern("tools/call", r);
            running(r);
          },
        },
      ],
    };

    // HTTP: three replicas on the state directory above, haproxy in
    // front of the first alone and of all three.
    const replicas = [];
    for (let i = 0; i < 3; i++) {
      const r = await listenTaskbox(bin, stateDir, token);
      replicas.push(r);
      ourPids.push(r.pid);
      closers.push(() => r.stop());
    }
    const named = replicas.map((r, i) => ({ name: `r${i}`, port: Number(new URL(r.url).port) }));
    const balancers = {};
    try {
      balancers.lb1 = await startBalancer(scratch, "lb1", named.slice(0, 1));
      balancers.lb3 = await startBalancer(scratch, "lb3", named);
      for (const b of Object.values(balancers)) {
        ourPids.push(b.pid);
        closers.push(() => b.stop());
      }
    } catch (e) {
      notes.push(`haproxy did not start, the balancer figures are not measured: ${e.message.split("\n")[0]}`);
      log(notes.at(-1));
    }
    log(`up: stdio legacy + modern, replicas ${replicas.map((r) => r.url).join(" ")}, balancers ${Object.values(balancers).map((b) => b.url).join(" ") || "none"}`);

    const maxC = Math.max(...CONNS);
    const conns = (url) => {
      const list = Array.from({ length: maxC }, () => connection(new URL(url).origin));
      closers.push(() => Promise.allSettled(list.map((c) => c.close())));
      return list;
    };
    const direct = replicas[0];
    // legacy: one session per connection, as bench/http.mjs does
    const legacyConns = conns(direct.url);
    const sessions = [];
    for (const c of legacyConns) {
      const s = new HttpSession(direct.url, token);
      await s.open(c);
      sessions.push(s);
    }
    closers.unshift(() => Promise.allSettled(sessions.map((s, i) => s.close(legacyConns[i]))));
    const httpStats = {};
    const stat = (key) => (httpStats[key] ||= newStats());
    const legacyHttp = (op) => {
      const reqs = sessions.map((s) => (op === "baseline" ? legacyRequest(s, "ping") : legacyRequest(s, "tools/call", getTask)));
      const st = stat(`legacy direct ${op}`);
      return {
        name: "legacy",
        pids: [direct.pid],
        conns: legacyConns,
        req: async (w) => {
          const r = await reqs[w].send(legacyConns[w], st);
          if (op === "get_task") running(r);
        },
      };
    };
    const modernHttp = (name, url, pids, cs) => (op) => {
      const req = op === "baseline" ? modernRequest(url, token, "server/discover") : modernRequest(url, token, "tools/call", getTask);
      const st = stat(`${name} ${op}`);
      return {
        name,
        pids,
        conns: cs,
        req: async (w) => {
          const r = await req.send(cs[w], st);
          if (op === "get_task") running(r);
        },
      };
    };
    const modernDirect = modernHttp("modern", direct.url, [direct.pid], conns(direct.url));
    const directForLb = modernHttp("direct", direct.url, [direct.pid], conns(direct.url));
    const lbParties = [directForLb];
    if (balancers.lb1) lbParties.push(modernHttp("lb1", balancers.lb1.url, [balancers.lb1.pid, direct.pid], conns(balancers.lb1.url)));
    if (balancers.lb3) lbParties.push(modernHttp("lb3", balancers.lb3.url, [balancers.lb3.pid, ...replicas.map((r) => r.pid)], conns(balancers.lb3.url)));

    // Every party answers both ops once before anything is timed.
    for (const op of OPS) {
      for (const p of stdioParties[op]) await p.call(0);
      for (const mk of [legacyHttp, modernDirect, ...lbParties]) {
        const p = mk(op);
        for (let w = 0; w < maxC; w++) await p.req(w, w);
      }
    }
    for (const k of Object.keys(httpStats)) httpStats[k] = newStats();

    // How round robin spreads modern calls over the three replicas.
    if (balancers.lb3) {
      const origins = replicas.map((r) => new URL(r.url).origin);
      const before = await Promise.all(origins.map((o) => toolCalls(o, token)));
      const p = lbParties.at(-1)("get_task");
      for (let k = 0; k < 300; k++) await p.req(k % maxC, k);
      const after = await Promise.all(origins.map((o) => toolCalls(o, token)));
      spread = after.map((a, i) => a - before[i]);
      log(`300 get_task through lb3 landed on r0/r1/r2: ${spread.join(" / ")}`);
      for (const k of Object.keys(httpStats)) httpStats[k] = newStats();
    }

    // --- the runs ------------------------------------------------------
    for (let i = 0; i <= runs; i++) {
      const ts = performance.now();
      const m0 = machineTicks();
      const our0 = ourTicks();
      const light = i === 0;
      const run = { stdio: {}, direct: {}, balancer: {} };
      const keep = (r) => ({
        p50: quantile(r.samples, 0.5),
        p99: quantile(r.samples, 0.99),
        n: r.samples.length,
        ...(r.rps !== undefined ? { rps: r.rps, clientCpu: r.clientCpuPct, errors: r.errors, firstError: r.firstError } : {}),
        serverUs: r.serverUsPerReq,
        ...(r.pidUsPerReq ? { pidUs: r.pidUsPerReq } : {}),
      });
      for (const [oi, op] of OPS.entries()) {
        const out = await interleaveCalls(stdioParties[op], light ? Math.round(calls / 4) : calls, 50, i + oi);
        for (const [name, r] of Object.entries(out)) run.stdio[`${name} ${op}`] = keep(r);
      }
      const sl = { slices: light ? 1 : slices, warmMs: light ? 300 : 100, measureMs: light ? 300 : 500 };
      for (const [oi, op] of OPS.entries())
        for (const [ci, c] of CONNS.entries()) {
          const out = await alternate([legacyHttp(op), modernDirect(op)], c, { ...sl, flip: i + oi + ci });
          for (const [name, r] of Object.entries(out)) {
            run.direct[`${name} ${op} c${c}`] = keep(r);
            if (r.errors) log(`direct ${name} ${op} c=${c}: ${r.errors} errors, first: ${r.firstError}`);
          }
        }
      if (lbParties.length > 1)
        for (const [oi, op] of OPS.entries())
          for (const [ci, c] of CONNS.entries()) {
            const out = await alternate(lbParties.map((mk) => mk(op)), c, { ...sl, flip: i + oi + ci });
            for (const [name, r] of Object.entries(out)) {
              run.balancer[`${name} ${op} c${c}`] = keep(r);
              if (r.errors) log(`balancer ${name} ${op} c=${c}: ${r.errors} errors, first: ${r.firstError}`);
            }
          }
      const m1 = machineTicks();
      const ours = ourTicks() - our0;
      run.machine = {
        busyPercent: (100 * (m1.busy - m0.busy)) / (m1.total - m0.total),
        othersPercent: (100 * Math.max(0, m1.busy - m0.busy - ours)) / (m1.total - m0.total),
        load: loadAverage(),
        seconds: (performance.now() - ts) / 1000,
      };
      if (!light) runsOut.push(run);
      const f = (part, k, m) => run[part][k]?.[m];
      log(`${light ? "warm-up" : `run ${i}/${runs}`} (${run.machine.seconds.toFixed(1)} s): ` +
        `stdio get_task p50 legacy ${f("stdio", "legacy get_task", "p50")?.toFixed(3)} modern ${f("stdio", "modern get_task", "p50")?.toFixed(3)} ms; ` +
        `HTTP c=1 legacy ${f("direct", "legacy get_task c1", "p50")?.toFixed(3)} modern ${f("direct", "modern get_task c1", "p50")?.toFixed(3)} ` +
        `lb1 ${f("balancer", "lb1 get_task c1", "p50")?.toFixed(3)} lb3 ${f("balancer", "lb3 get_task c1", "p50")?.toFixed(3)} ms; ` +
        `load ${run.machine.load[0]}, others ${run.machine.othersPercent.toFixed(0)}% of the machine`);
    }
    clearInterval(sampler);
    timed = { ticks: machineTicks(), ours: ourTicks() - our0All, seconds: (performance.now() - t0) / 1000, load: loadAverage() };
    if (profile) {
      try {
        instructions = await profileEnvelope(bin, env, scratch, getTask, token, log);
      } catch (e) {
        notes.push(`the callgrind counts failed: ${e.message.split("\n")[0]}`);
        log(notes.at(-1));
      }
    }
    sizes.http = Object.fromEntries(Object.entries(httpStats).map(([k, s]) => [k, {
      answers: s.answers, sse: s.sse, requestBytes: s.answers ? s.sent / s.answers : NaN, answerBytes: s.answers ? s.bytes / s.answers : NaN,
    }]));
  } finally {
    clearInterval(sampler);
    for (const c of closers) await Promise.resolve().then(c).catch((e) => log(`teardown: ${e.message}`));
    await reapLeftovers(TASK_SLEEP);
  }

  // The machine over the setup and the timed runs (not the callgrind part).
  const ticks1 = timed?.ticks ?? machineTicks();
  const busy = ticks1.busy - ticks0.busy;
  const total = ticks1.total - ticks0.total;
  const ours = timed?.ours ?? 0;
  const meta = {
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    runs,
    calls,
    slices,
    taskboxVersion: version,
    // Where it was built, relative to the tree (no machine path).
    taskboxBin: relative(dirname(here), srcBin),
    taskboxSha256: sha256,
    taskboxMtime: binMtime,
    haproxy: haproxyVersion(),
    node: process.versions.node,
    undici: JSON.parse(readFileSync(join(here, "node_modules/undici/package.json"), "utf8")).version,
    cores: cpus().length,
    cpu: cpus()[0]?.model?.trim() || "unknown CPU",
    loadStart,
    loadEnd: timed?.load ?? loadAverage(),
    loadSamples,
    timedSeconds: timed?.seconds,
    busyPercent: (100 * busy) / total,
    othersPercent: (100 * Math.max(0, busy - ours)) / total,
    seconds: (performance.now() - t0) / 1000,
    spread,
    sizes,
    instructions,
    profileN: PROFILE_N,
    notes,
  };
  writeModernResults(results, meta, runsOut);
  try {
    rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
  } catch (e) {
    log(`could not remove ${scratch}: ${e.message}`);
  }
  log(`wrote ${join(results, "modern.md")} in ${meta.seconds.toFixed(0)} s`);
}

main().then(
  () => process.exit(0),
  (e) => {
    log(`failed: ${e.stack || e}`);
    process.exit(1);
  },
);
