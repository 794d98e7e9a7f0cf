// Waits at scale: 1,000 waiting get_tasks over 10 sandboxes of 100 quiet
// tasks each, on each remote provider and on the local one (the baseline),
// each provider in a taskbox process of its own (the real binary, stdio, one
// official MCP SDK client holding every wait in flight), with the
// instance's default settings. The scenario is bench/lib/waitscenario.mjs;
// the report bench/lib/waitsreport.mjs (bench/results/waits.md and
// waits.json; a run replaces the rows of the providers it measured and
// keeps the others).
//
// Providers (BENCH_WAITS_PROVIDERS, comma-separated; local is always
// measured first, as the baseline of the rows of the same run):
//   docker       a podman engine (tests/docker/engine.sh) behind a counting
//                proxy (bench/lib/countproxy.mjs) in this process: engine
//                requests and connections counted
//   e2b          the E2B fake with 50 ms added per request (as the remote
//                bench's +50 ms cells); requests counted by its request log
//   k8s-pod, k8s-sandbox
//                the loopback fake kube-apiserver (tests/k8s/fake.mjs; needs
//                root), kind pod and kind sandbox; requests and execs counted
//                by its request log
// Run it through bench/run.sh: BENCH_ONLY=remote runs it on local,docker,e2b
// after bench/remote.mjs, BENCH_ONLY=k8s on local,k8s-pod,k8s-sandbox after
// bench/k8s.mjs; BENCH_SCENARIO=waits runs it alone. `node bench/waits.mjs
// --report` writes waits.md again from waits.json.
//
// Environment:
//   TASKBOX_BIN, TASKBOX_PLUGIN_PATH   as the other benches
//   BENCH_WAITS_PROVIDERS   default docker,e2b,k8s-pod,k8s-sandbox
//   BENCH_WAITS_SANDBOXES   sandboxes per provider (default 10)
//   BENCH_WAITS_PER         quiet tasks, each with its wait, per sandbox
//                           (default 100)
//   BENCH_WAITS_QUIET       seconds of the quiet window (default 10)
//   BENCH_WAITS_TIMEOUT     each call's client timeout in s (default 90: past
//                           the waits' `wait: 60`)
//   BENCH_WAITS_WAKE        the wake phase's bound in s (default 90)
//   BENCH_WAITS_SETUP       the bound of each set-up phase in s (default 900)
//   BENCH_WAITS_WORKERS     the server's --workers (default: its own, 8 on
//                           stdio)
//   BENCH_WAITS_NOTE        a note on the run, printed with its figures
//   BENCH_RESULTS           where to write waits.md and waits.json
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startCountProxy } from "./lib/countproxy.mjs";
import { copyTaskbox, isoSeconds, list, removeScratch, runMain, watchMachine } from "./lib/providerbench.mjs";
import { startEngine, startFakes, stopEngine } from "./lib/remotesetup.mjs";
import { connectTaskbox } from "./lib/servers.mjs";
import { WAIT_S, waitsScenario } from "./lib/waitscenario.mjs";
import { writeWaitsResults } from "./lib/waitsreport.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const top = dirname(here);
const log = (msg) => process.stderr.write(`bench waits: ${msg}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const KNOWN = ["local", "docker", "e2b", "k8s-pod", "k8s-sandbox"];
// The E2B fake's added latency, as the remote bench's +50 ms cells.
const E2B_LATENCY_MS = 50;

// The backend of provider p, started: { config (the instance's entry, or
// null for the local default), env (taskbox's extra environment), counter,
// stop() }, or { skipped: why }.
async function backend(p, scratch, shared) {
  if (p === "local") return { config: null, env: {}, counter: null, stop: async () => {} };
  if (p === "docker") {
    const dir = join(scratch, "engine");
    const engine = startEngine(dir, [0]);
    if (!engine) return { skipped: "no container engine could run here (engine.sh exit 77)" };
    const proxy = await startCountProxy(join(scratch, "engine-count.sock"), engine.hosts[0].replace(/^unix:\/\//, ""));
    let c0;
    return {
      config: { plugin: "docker", settings: { host: proxy.host, image: engine.image } },
      env: {},
      counter: {
        start: async () => {
          c0 = proxy.counts();
        },
        stop: async () => {
          const c1 = proxy.counts();
          const byPath = {};
          for (const [k, v] of Object.entries(c1.byPath)) if (v - (c0.byPath[k] || 0)) byPath[k] = v - (c0.byPath[k] || 0);
          return { requests: c1.requests - c0.requests, connections: c1.connections - c0.connections, detail: byPath };
        },
        open: () => proxy.counts().open,
      },
      stop: async () => {
        proxy.close();
        stopEngine(dir);
      },
    };
  }
  if (p === "e2b") {
    const { apiKey, fakes } = await startFakes([E2B_LATENCY_MS]);
    const fake = fakes[E2B_LATENCY_MS];
    const mine = (rs) => (Array.isArray(rs) ? rs : []).filter((r) => !String(r.url).startsWith("/_fake"));
    return {
      config: { plugin: "e2b", settings: { api_url: fake.apiUrl, sandbox_url: fake.sandboxUrl } },
      env: { E2B_API_KEY: apiKey },
      counter: {
        start: async () => {
          await fake.clearRequests();
        },
        stop: async () => {
          const rs = mine(await fake.requests());
          const detail = {};
          for (const r of rs) {
            const k = `${r.plane} ${r.method} ${String(r.url).replace(/\?.*$/, "").replace(/\/[0-9a-z]{16,}/g, "/ID")}`;
            detail[k] = (detail[k] || 0) + 1;
          }
          return { requests: rs.length, detail, capped: rs.length >= 10000 };
        },
        open: () => null,
      },
      stop: () => fake.stop(),
    };
  }
  // k8s-pod, k8s-sandbox: one fake for both.
  if (process.getuid?.() !== 0) return { skipped: "not root: the fake apiserver's pods are chroots" };
  if (!shared.k8s) {
    process.env.TASKBOX_SRCDIR ||= top;
    process.env.TASKBOX_BUILDDIR ||= dirname(process.env.TASKBOX_BIN);
    let mod;
    try {
      mod = await import("../tests/k8s/fake.mjs");
    } catch (e) {
      return { skipped: `tests/k8s/fake.mjs cannot be loaded (cd tests && npm ci --ignore-scripts): ${e.message}` };
    }
    const fake = await mod.startFake({ lifetime: 3600 });
    if (!fake) return { skipped: "the pods' root filesystem cannot be built here (tests/k8s/rootfs.sh)" };
    shared.k8s = fake;
  }
  const fake = shared.k8s;
  const mine = (es) => (Array.isArray(es) ? es : []).filter((e) => !e.path.startsWith("/fake/"));
  return {
    config: { plugin: "k8s", settings: { kubeconfig: fake.kubeconfig, kind: p.slice(4) } },
    env: {},
    counter: {
      start: async () => {
        await fake.clearLog();
      },
      stop: async () => {
        // The fake logs an exec when it ends: the window's short execs are
        // in; the watches' long ones, still open, are not.
        const es = mine(await fake.log());
        const detail = {};
        for (const e of es) {
          const k = `${e.method} ${e.path.endsWith("/exec") ? "pods/exec" : e.path.replace(/^\/apis?\/.*\/namespaces\/[^/]+\//, "").replace(/\/tb-[0-9a-f]+$/, "/NAME")}`;
          detail[k] = (detail[k] || 0) + 1;
        }
        return { requests: es.length, execs: es.filter((e) => e.path.endsWith("/exec")).length, detail };
      },
      open: () => null,
    },
    stop: async () => {},
  };
}

// Closes taskbox within 5 s, killing it when it does not go.
async function closeTaskbox(tb) {
  await Promise.race([tb.close().catch(() => {}), sleep(5000)]);
  try {
    process.kill(tb.pid, "SIGKILL");
  } catch {
    // gone
  }
}

async function main() {
  const results = process.env.BENCH_RESULTS || join(here, "results");
  // `node bench/waits.mjs --report`: waits.md written again from waits.json.
  if (process.argv[2] === "--report") return writeWaitsResults(results, null, null);
  const srcBin = process.env.TASKBOX_BIN;
  if (!srcBin) throw new Error("TASKBOX_BIN is not set: run bench/run.sh");
  const asked = list(process.env.BENCH_WAITS_PROVIDERS, "docker,e2b,k8s-pod,k8s-sandbox");
  for (const p of asked) if (!KNOWN.includes(p)) throw new Error(`BENCH_WAITS_PROVIDERS: ${p}: one of ${KNOWN.join(", ")}`);
  const providers = ["local", ...asked.filter((p) => p !== "local")];
  const num = (name, d) => {
    const v = Number(process.env[name] ?? d);
    if (!Number.isFinite(v) || v <= 0) throw new Error(`${name}: a positive number`);
    return v;
  };
  const opts = {
    sandboxes: num("BENCH_WAITS_SANDBOXES", 10),
    perSandbox: num("BENCH_WAITS_PER", 100),
    quietSeconds: num("BENCH_WAITS_QUIET", 10),
    clientTimeoutMs: num("BENCH_WAITS_TIMEOUT", 90) * 1000,
    wakeTimeoutMs: num("BENCH_WAITS_WAKE", 90) * 1000,
    setupTimeoutMs: num("BENCH_WAITS_SETUP", 900) * 1000,
    ...(process.env.BENCH_WAITS_WORKERS ? { workers: num("BENCH_WAITS_WORKERS", 8) } : {}),
    waitSeconds: WAIT_S,
  };
  const scratch = mkdtempSync(join(tmpdir(), "taskbox-bench-waits-"));
  const { bin, stamp } = copyTaskbox(srcBin, scratch);
  const machine = watchMachine();
  const rows = [];
  const shared = {};
  // A run's key: its start and its providers (two runs may start together).
  const runId = `${isoSeconds(new Date())} ${providers.join(",")}`;
  const metaNow = () => ({ date: runId.split(" ")[0], run: runId, ...opts, providers, ...stamp, ...machine.meta(NaN), notes: process.env.BENCH_WAITS_NOTE ? [process.env.BENCH_WAITS_NOTE] : [] });
  try {
    for (const p of providers) {
      const row = { provider: p, run: runId };
      rows.push(row);
      let be = null;
      let tb = null;
      try {
        be = await backend(p, scratch, shared);
        if (be.skipped) {
          row.skipped = be.skipped;
          log(`${p}: skipped: ${be.skipped}`);
          continue;
        }
        const cfgDir = join(scratch, p, "config");
        mkdirSync(cfgDir, { recursive: true });
        const env = { ...be.env };
        if (be.config) {
          const cfg = join(cfgDir, "waits.json");
          writeFileSync(cfg, JSON.stringify({ default: p, providers: { [p]: be.config } }, null, 2));
          env.TASKBOX_CONFIG = cfg;
        }
        tb = await connectTaskbox(bin, join(scratch, p, "state"), env, opts.workers ? ["--workers", String(opts.workers)] : []);
        Object.assign(row, await waitsScenario({ ...opts, tb, label: p, create: be.config ? { provider: p } : {}, counter: be.counter, log }));
        // The sandboxes go with the backend; the local ones are killed here.
        if (p === "local")
          await Promise.all(row.boxes.map((sandbox_id) => tb.call("kill_sandbox", { sandbox_id }, { timeout: 30000 }).catch((e) => log(`kill_sandbox: ${e.message}`))));
      } catch (e) {
        row.failed = e.message.slice(0, 500);
        log(`${p}: failed: ${e.message}`);
      } finally {
        if (tb) {
          row.serverStderr = tb.stderr().split("\n").slice(-5).join("\n").slice(-800);
          await closeTaskbox(tb);
        }
        if (be && !be.skipped) await be.stop().catch((e) => log(`${p}: stopping its backend: ${e.message}`));
        // The results so far, so that a run cut short leaves its rows.
        writeWaitsResults(results, metaNow(), rows);
      }
    }
  } finally {
    machine.stop();
    if (shared.k8s) await shared.k8s.stop?.().catch(() => {});
    removeScratch(scratch, log);
  }
  const meta = metaNow();
  writeWaitsResults(results, meta, rows);
  log(`wrote ${join(results, "waits.md")} in ${meta.seconds.toFixed(0)} s`);
}

runMain(main, log, "waits");
