// The Kubernetes benchmark: what taskbox's calls cost on the k8s provider
// against one raw pods/exec round trip to the same apiserver.
//
// The apiserver is the loopback fake (tests/k8s/fake_apiserver.py through
// tests/k8s/fake.mjs: TLS with client certificates, pods/exec over
// WebSocket running real processes chrooted into a root filesystem built by
// tests/k8s/rootfs.sh; it needs root). One taskbox process (the real
// binary, stdio, the official MCP SDK client) has one k8s provider instance
// per cell: kind "pod" (bare Pods) and kind "sandbox" (agent-sandbox
// Sandboxes, which the fake's controller turns into pods), each with
// "supervisor": "python3" and with "supervisor": "static" (the static
// native supervisor, the default where it runs in the pod, copied into the
// pod by its first verb, before anything is timed), set explicitly.
//
// The baseline, measured in the same run on the same pod and interleaved
// with taskbox's calls: one raw exec of `true` (a new TLS connection, the
// WebSocket upgrade with v5.channel.k8s.io, read to the close frame and
// closed, the way the plugin does each exec), done here in node without
// taskbox. A second baseline: one REST GET of the pod on a kept-alive
// connection. Measured through taskbox: create_sandbox, start_task (`true`),
// get_task on a running and on a finished task, and kill_sandbox of what
// create_sandbox made. Diagnostics beside them, sent raw like the baseline:
// the exact exec each kind of get_task and start_task sends (taken from the
// fake's request log; start_task's with a new task id each time), which
// splits a call's time into what its pod-side command costs and what
// taskbox adds, and `python3 -I -S -c pass`, the interpreter start-up that
// start_task's exec begins with. Every ratio is a call's p50 over the baseline's p50 in
// the same run, then summarised as median (min–max) across runs. Run it
// through bench/run.sh (BENCH_ONLY=k8s runs this part alone); it skips,
// saying why, where the fake cannot run (not root, no busybox for the
// pods' root, no python3 or openssl).
//
// Environment:
//   TASKBOX_BIN              the taskbox binary (required; copied first)
//   TASKBOX_PLUGIN_PATH      the build's plugin dirs (k8s)
//   TASKBOX_SRCDIR           the source tree (default: the one holding bench/)
//   TASKBOX_BUILDDIR         where the pods' root filesystem is built once
//                            (tests/k8s/rootfs under it; set by bench/run.sh)
//   BENCH_K8S_RUNS           measured runs after a warm-up (default 3)
//   BENCH_K8S_CALLS          raw execs of `true`, REST GETs, get_tasks of
//                            each kind and raw sends of their execs per cell
//                            and run (default 8)
//   BENCH_K8S_STARTS         start_tasks and raw sends of their exec, raw
//                            execs of python3 and create_sandboxes per cell
//                            and run (default 3)
//   BENCH_K8S_MANY           waits at once, once per cell after the runs
//                            (bench/lib/manywaits.mjs; default 48, 0 skips
//                            them)
//   BENCH_K8S_KINDS          pod,sandbox (the default) or one of them
//   BENCH_K8S_SUPERVISORS    python3,static (the default), or any of
//                            python3, static and auto
//   BENCH_RESULTS            where to write k8s.md and k8s.json
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:https";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { fileURLToPath } from "node:url";
import { benchSupervisors, cellRuns, closeCells, copyTaskbox, fileStamp, isoSeconds, list, removeScratch, runMain, skip, watchMachine } from "./lib/providerbench.mjs";
import { machineLine, perRunTable, range, ratio, row } from "./lib/providerreport.mjs";
import { TASK_LIMIT, manyFromEnv, manyWaitsCells, manyWaitsTable } from "./lib/manywaits.mjs";
import { interleave, reapLeftovers } from "./lib/rounds.mjs";
import { connectTaskbox } from "./lib/servers.mjs";
import { fmt, quantile, summary } from "./lib/stats.mjs";
import { createCellSandbox, getTaskParts, sc, startCellTasks, startTaskPart } from "./lib/taskcalls.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const top = dirname(here);
const log = (msg) => process.stderr.write(`bench k8s: ${msg}\n`);
// The running task: a sleep with a duration nothing else uses.
const K8S_SLEEP = ["sleep", "2986"];
// The warm-up run: enough calls to warm every path.
const LIGHT = { calls: 2, starts: 1 };

const RAW = "raw exec `true`";
const REST = "REST GET of the pod";
const REPLAY_RUNNING = "raw exec of get_task (running)'s command";
const REPLAY_FINISHED = "raw exec of get_task (finished)'s command";
const REPLAY_START = "raw exec of start_task's command (a new task id)";
const PYTHON = "raw exec `python3 -I -S -c pass`";
const OPS = [RAW, REST, REPLAY_RUNNING, REPLAY_FINISHED, REPLAY_START, PYTHON, "get_task (running)", "get_task (finished)", "start_task", "create_sandbox", "kill_sandbox"];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// --- raw clients of the fake -------------------------------------------------

const WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

// One masked client frame (RFC 6455 5.3) with a payload under 126 bytes.
function clientFrame(opcode, payload) {
  const mask = randomBytes(4);
  const p = Buffer.from(payload);
  for (let i = 0; i < p.length; i++) p[i] ^= mask[i & 3];
  return Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | p.length]), mask, p]);
}

// exec(target) runs one pods/exec: a new TLS connection with the
// kubeconfig's client certificate, the upgrade offering v5.channel.k8s.io,
// the frames read to the server's close frame, which is answered before the
// connection is ended. Resolves with the channel-3 Status and the bytes of
// stdout and stderr.
function rawExecClient(info) {
  const tls = {
    host: "127.0.0.1",
    port: info.port,
    ca: readFileSync(info.ca),
    cert: readFileSync(info.client_cert),
    key: readFileSync(info.client_key),
    ALPNProtocols: ["http/1.1"],
  };
  return (target) =>
    new Promise((resolve, reject) => {
      const key = randomBytes(16).toString("base64");
      const accept = createHash("sha1").update(key + WS_GUID).digest("base64");
      const sock = tlsConnect(tls);
      let buf = Buffer.alloc(0);
      let upgraded = false;
      let status = null;
      const bytes = { 1: 0, 2: 0 };
      const fail = (e) => {
        sock.destroy();
        reject(e);
      };
      sock.on("error", fail);
      sock.once("secureConnect", () =>
        sock.write(
          `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${info.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n`,
        ),
      );
      sock.on("data", (d) => {
        buf = buf.length ? Buffer.concat([buf, d]) : d;
        if (!upgraded) {
          const end = buf.indexOf("\r\n\r\n");
          if (end < 0) return;
          const head = buf.subarray(0, end).toString("latin1");
          if (!/^HTTP\/1\.1 101 /.test(head) || !head.includes(`Sec-WebSocket-Accept: ${accept}`))
            return fail(new Error(`exec ${target.slice(0, 120)}: no upgrade: ${head.slice(0, 300)}`));
          upgraded = true;
          buf = buf.subarray(end + 4);
        }
        // Server frames are unmasked.
        for (;;) {
          if (buf.length < 2) return;
          const op = buf[0] & 0x0f;
          let len = buf[1] & 0x7f;
          let at = 2;
          if (len === 126) {
            if (buf.length < 4) return;
            len = buf.readUInt16BE(2);
            at = 4;
          } else if (len === 127) {
            if (buf.length < 10) return;
            len = Number(buf.readBigUInt64BE(2));
            at = 10;
          }
          if (buf.length < at + len) return;
          const payload = buf.subarray(at, at + len);
          buf = buf.subarray(at + len);
          if (op === 0x9) sock.write(clientFrame(0xa, payload));
          else if (op === 0x8) {
            sock.end(clientFrame(0x8, payload.subarray(0, 2)));
            return resolve({ status, bytes });
          } else if (op === 0x2 && len > 0) {
            // A message's first byte is its channel: 1 stdout, 2 stderr,
            // 3 the Status (the fake never fragments one).
            const channel = payload[0];
            if (channel === 3) status = JSON.parse(payload.subarray(1).toString());
            else if (channel in bytes) bytes[channel] += len - 1;
          }
        }
      });
      sock.on("end", () => fail(new Error(`exec ${target.slice(0, 120)}: closed before the close frame`)));
    });
}

// get(path) on one kept-alive TLS connection with the client certificate:
// resolves with { status, bytes }.
function restClient(info) {
  const agent = new Agent({
    keepAlive: true,
    maxSockets: 1,
    ca: readFileSync(info.ca),
    cert: readFileSync(info.client_cert),
    key: readFileSync(info.client_key),
  });
  const get = (path) =>
    new Promise((resolve, reject) => {
      const req = request(info.url + path, { agent }, (res) => {
        let bytes = 0;
        res.on("data", (c) => (bytes += c.length));
        res.on("end", () => resolve({ status: res.statusCode, bytes }));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end();
    });
  return { get, close: () => agent.destroy() };
}

// --- one cell: a provider instance of one kind -------------------------------

// The requests the fake logged since the last clearLog, without its own
// control endpoints: { rest, exec, what, argv, entries }. The fake logs a request
// after answering it (an exec after the client's close frame), so the log
// is read until it stops growing.
async function requestsSince(fake) {
  const mine = async () => (await fake.log()).filter((e) => !e.path.startsWith("/fake/"));
  let entries = [];
  for (let i = 0, same = 0; i < 50 && same < 2; i++) {
    await sleep(100);
    const now = await mine();
    same = now.length && now.length === entries.length ? same + 1 : 0;
    entries = now;
  }
  const exec = entries.filter((e) => e.path.endsWith("/exec")).length;
  // Each exec's argv, every argument cut to 120 characters.
  const argv = entries
    .filter((e) => e.path.endsWith("/exec"))
    .map((e) => new URLSearchParams(e.query).getAll("command").map((a) => (a.length > 120 ? `${a.slice(0, 117)}...` : a)));
  const what = entries.map((e) => `${e.method} ${e.path.endsWith("/exec") ? "pods/exec" : e.path.replace(/^\/apis?\/.*\/namespaces\/[^/]+\//, "").replace(/\/tb-[0-9a-f]+$/, "/NAME")}`);
  return { rest: entries.length - exec, exec, what, argv, entries };
}

// Creates the cell's sandbox, its running and finished tasks and its raw
// targets, and counts the requests one call of each op makes.
async function setupCell(tb, fake, cell) {
  const sandbox_id = await createCellSandbox(tb, cell);
  await startCellTasks(tb, cell, K8S_SLEEP);

  // What one call of each op asks of the apiserver (connect's answer is
  // reused for settings.connection_reuse seconds, so a call soon after
  // another makes no GET of its own).
  cell.requests = {};
  const count = async (op, fn) => {
    await fake.clearLog();
    const v = await fn();
    const r = await requestsSince(fake);
    cell.requests[op] = { rest: r.rest, exec: r.exec, what: r.what, argv: r.argv };
    return { v, r };
  };
  // The exec a call sent, to be sent again raw.
  const execOf = (op, r) => {
    const e = r.entries.find((x) => x.path.endsWith("/exec"));
    if (!e) throw new Error(`${cell.instance}: ${op} made no exec: ${r.what.join(", ")}`);
    return e;
  };
  const runningExec = execOf("get_task (running)", (await count("get_task (running)", () => tb.call("get_task", cell.running))).r);
  const finishedExec = execOf("get_task (finished)", (await count("get_task (finished)", () => tb.call("get_task", cell.finished))).r);
  const m = runningExec.path.match(/^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/exec$/);
  cell.namespace = m[1];
  cell.pod = m[2];
  cell.replay = {
    [REPLAY_RUNNING]: `${runningExec.path}?${runningExec.query}`,
    [REPLAY_FINISHED]: `${finishedExec.path}?${finishedExec.query}`,
  };
  const target = (argv) => `/api/v1/namespaces/${cell.namespace}/pods/${cell.pod}/exec?container=main&stdout=true&stderr=true&${argv.map((a) => `command=${encodeURIComponent(a)}`).join("&")}`;
  cell.rawTarget = target(["true"]);
  cell.pythonTarget = target(["python3", "-I", "-S", "-c", "pass"]);
  cell.restPath = `/api/v1/namespaces/${cell.namespace}/pods/${cell.pod}`;
  // start_task's exec, sent again with a new task id each time (the
  // supervisor refuses an id it has).
  const startExec = execOf("start_task", (await count("start_task", () => tb.call("start_task", { sandbox_id, command: "true", timeout: 60 }))).r);
  cell.tasks++;
  const startArgv = new URLSearchParams(startExec.query).getAll("command");
  const oldId = startArgv[startArgv.indexOf("--id") + 1];
  if (!/^[0-9a-f]{32}$/.test(oldId || "") || startExec.query.split(`command=${oldId}`).length !== 2)
    throw new Error(`${cell.instance}: start_task's exec has no --id to replace: ${startArgv.slice(4).join(" ").slice(0, 200)}`);
  cell.startTarget = () => `${startExec.path}?${startExec.query.replace(`command=${oldId}`, `command=${randomBytes(16).toString("hex")}`)}`;
  const made = await count("create_sandbox", () => tb.call("create_sandbox", { provider: cell.instance, timeout: 600 }));
  await count("kill_sandbox", () => tb.call("kill_sandbox", { sandbox_id: sc(made.v).sandbox_id }));
}

// One run's interleaved calls on a cell, two at a time: n raw execs of
// `true`, REST GETs, get_tasks of each kind and raw sends of their execs;
// m start_tasks and raw sends of their exec, raw execs of python3 and
// create_sandboxes; then a kill_sandbox of each sandbox made.
async function timeCalls(tb, cell, clients, rec, n, m) {
  const made = [];
  const parts = [
    {
      name: RAW,
      n,
      fn: async () => {
        const r = await clients.exec(cell.rawTarget);
        if (r.status?.status !== "Success") throw new Error(`${cell.instance}: raw exec: ${JSON.stringify(r.status)}`);
      },
    },
    {
      name: REST,
      n,
      fn: async () => {
        const r = await clients.rest.get(cell.restPath);
        if (r.status !== 200 || r.bytes < 100) throw new Error(`${cell.instance}: GET ${cell.restPath}: HTTP ${r.status}, ${r.bytes} bytes`);
      },
    },
    ...[REPLAY_RUNNING, REPLAY_FINISHED].map((name) => ({
      name,
      n,
      fn: async () => {
        const r = await clients.exec(cell.replay[name]);
        if (r.status?.status !== "Success" || r.bytes[1] < 10) throw new Error(`${cell.instance}: ${name}: ${JSON.stringify(r)}`);
      },
    })),
    ...getTaskParts(tb, cell, n),
    {
      name: REPLAY_START,
      n: m,
      fn: async () => {
        const r = await clients.exec(cell.startTarget());
        if (r.status?.status !== "Success" || r.bytes[1] < 10) throw new Error(`${cell.instance}: ${REPLAY_START}: ${JSON.stringify(r)}`);
        cell.tasks++;
      },
    },
    {
      name: PYTHON,
      n: m,
      fn: async () => {
        const r = await clients.exec(cell.pythonTarget);
        if (r.status?.status !== "Success") throw new Error(`${cell.instance}: ${PYTHON}: ${JSON.stringify(r.status)}`);
      },
    },
    startTaskPart(tb, cell, m),
    {
      name: "create_sandbox",
      n: m,
      fn: async () => {
        const v = sc(await tb.call("create_sandbox", { provider: cell.instance, timeout: 600 }));
        if (!v.sandbox_id) throw new Error(`${cell.instance}: create_sandbox: ${JSON.stringify(v).slice(0, 200)}`);
        made.push(v.sandbox_id);
      },
    },
  ];
  await interleave(rec, parts, 2);
  for (const sandbox_id of made) {
    const t0 = performance.now();
    await tb.call("kill_sandbox", { sandbox_id });
    rec.sample("kill_sandbox", performance.now() - t0);
  }
}

// --- the report ----------------------------------------------------------------

// An exec's argv past the plugin's wrapper, ids shortened, at most 100
// characters.
const abridged = (argv) => {
  const rest = (argv[0] === "/bin/sh" && argv[1] === "-c" ? argv.slice(4) : argv)
    .join(" ")
    .replace(/[0-9a-f]{40}/g, "SHA1")
    .replace(/[0-9a-f]{32}/g, "TASK")
    .replace(/\x01/g, "^A")
    .replace(/\|/g, "\\|");
  return rest.length > 100 ? `${rest.slice(0, 97)}...` : rest;
};

// The splits of "Where the time goes": [name, numerator op, denominator op].
const SPLITS = [
  ["get_task (running) / its exec sent raw", "get_task (running)", REPLAY_RUNNING],
  ["get_task (finished) / its exec sent raw", "get_task (finished)", REPLAY_FINISHED],
  ["get_task (running)'s exec / raw exec `true`", REPLAY_RUNNING, RAW],
  ["get_task (finished)'s exec / raw exec `true`", REPLAY_FINISHED, RAW],
  ["start_task / its exec sent raw", "start_task", REPLAY_START],
  ["start_task's exec / raw exec `true`", REPLAY_START, RAW],
  ["start_task's exec / raw exec `python3 -I -S -c pass`", REPLAY_START, PYTHON],
  ["raw exec `python3 -I -S -c pass` / raw exec `true`", PYTHON, RAW],
];

// Per cell, across runs: each op's p50 and p99, and its p50 over the raw
// exec's and the REST GET's p50 in the same run; the splits likewise.
function summarise(meta, runs) {
  const out = {};
  for (const c of meta.cells) {
    const per = (op, q) => runs.map((r) => quantile(r.cells[c.instance]?.[op] || [], q));
    const over = (a, b) => {
      const pb = per(b, 0.5);
      return summary(per(a, 0.5).map((v, i) => ratio(v, pb[i])));
    };
    const ops = {};
    for (const op of OPS)
      ops[op] = {
        p50: summary(per(op, 0.5)),
        p99: summary(per(op, 0.99)),
        overRawExec: over(op, RAW),
        overRestGet: over(op, REST),
        n: runs.reduce((a, r) => a + (r.cells[c.instance]?.[op]?.length || 0), 0),
      };
    out[c.instance] = { ops, splits: Object.fromEntries(SPLITS.map(([name, a, b]) => [name, over(a, b)])) };
  }
  return out;
}

function writeResults(dir, meta, runs, many) {
  mkdirSync(dir, { recursive: true });
  const sum = summarise(meta, runs);
  const cellName = (c) => `kind ${c.kind}, ${c.supervisor}`;
  const md = [
    "## Kubernetes provider: taskbox's calls against one raw exec on the same apiserver",
    "",
    `Written by \`bench/run.sh\` (bench/k8s.mjs) on ${meta.date}: ${runs.length} measured runs after one warm-up run, against the loopback fake kube-apiserver (tests/k8s/fake_apiserver.py). Each figure is the median (min–max) across runs of that run's value; each ratio is a call's p50 over the baseline's p50 measured in the same run on the same pod, interleaved with it, then summarised across runs. Latency in ms; lower is better.`,
    "",
    `- taskbox ${meta.taskboxVersion}: ${meta.taskboxBin} (sha256 ${meta.taskboxSha256.slice(0, 16)}…, built ${meta.taskboxMtime}), copied once; plugin k8s.so (sha256 ${meta.plugin.sha256.slice(0, 16)}…, built ${meta.plugin.mtime}); the fake on ${meta.python}; node ${meta.node}.`,
    machineLine(meta),
    `- run time ${meta.seconds.toFixed(0)} s (fake, root filesystem and sandboxes set up in ${fmt(meta.setupSeconds)} s); per cell and run: ${meta.calls} raw execs of \`true\`, REST GETs, get_tasks of each kind and raw sends of their execs, ${meta.starts} start_tasks and raw sends of their exec, raw execs of python3 and create_sandboxes (then as many kill_sandboxes); the warm-up run ${meta.light.calls} and ${meta.light.starts}. With so few samples a run's p99 is its slowest call.`,
    ...meta.notes.map((x) => `- Note: ${x}`),
    "",
    "### Calls against the baselines",
    "",
    "Baseline: one raw pods/exec of `true` on the sandbox's pod, done by the bench without taskbox (a new TLS connection with the kubeconfig's client certificate, the WebSocket upgrade offering `v5.channel.k8s.io`, read to the close frame, closed), as the plugin does each exec. Second baseline: one `GET /api/v1/namespaces/NS/pods/NAME` on a kept-alive TLS connection. Diagnostics, sent raw the same way as the baseline: the exact exec each kind of get_task sends (taken from the fake's request log: its batched read of the task's files), the exact exec start_task sends (the same, with a new task id each time, so each starts a task `true` as start_task does), and `python3 -I -S -c pass` (the interpreter start-up that start_task's exec begins with).",
    "",
    row(["cell", "op", "p50", "p99", "p50 / raw exec p50", "p50 / REST GET p50", "samples"]),
    row(["---", "---", "---:", "---:", "---:", "---:", "---:"]),
  ];
  for (const c of meta.cells) {
    const s = sum[c.instance].ops;
    for (const op of OPS)
      md.push(row([cellName(c), op, range(s[op].p50), range(s[op].p99), op === RAW ? "1" : range(s[op].overRawExec), op === REST ? "1" : range(s[op].overRestGet), s[op].n]));
  }
  md.push(
    "",
    "### Where the time goes",
    "",
    "A get_task and a start_task on this provider are one exec each (the requests below). A call's p50 over the p50 of its own exec sent raw is what taskbox adds around that exec (MCP, the provider call, the plugin's TLS, WebSocket and parsing); that exec over the raw exec of `true` is what its pod-side command costs beyond an empty exec. get_task's command is a shell that runs `stat`, `dd`, `wc` and `cat` once per file it reads: four files for a running task, one for a finished one. start_task's is the plugin's wrapper shell reading the supervisor's source back from its file, then the task supervisor's `start` under `python3 -I -S`; its exec over a raw `python3 -I -S -c pass` is what the supervisor's own work adds to the interpreter's start-up.",
    "",
    row(["split (p50 over p50, same run)", ...meta.cells.map(cellName)]),
    row(["---", ...meta.cells.map(() => "---:")]),
    ...SPLITS.map(([name]) => row([name, ...meta.cells.map((c) => range(sum[c.instance].splits[name]))])),
    "",
    "### Requests per call",
    "",
    "From the fake's request log, one call of each op made while setting the cell up (right after other calls, so the plugin's connect reused what it had learnt: `connection_reuse`, 10 s by default).",
    "",
    row(["cell", "op", "REST requests", "execs", "in order", "each exec's argv after `/bin/sh -c SCRIPT sh` (abridged)"]),
    row(["---", "---", "---:", "---:", "---", "---"]),
    ...meta.cells.flatMap((c) =>
      Object.entries(c.requests || {}).map(([op, r]) =>
        row([cellName(c), op, r.rest, r.exec, r.what.join(", "), r.argv.map((a) => `\`${abridged(a)}\``).join("; ") || "–"]),
      ),
    ),
    "",
    ...manyWaitsTable(many, cellName, () => null, "Each wait's watch is the supervisor's `wait` verb run through a pods/exec (a WebSocket) of its own."),
    ...perRunTable(meta, runs),
    "",
    "### Method",
    "",
    `The fake kube-apiserver (tests/k8s/fake.mjs starting tests/k8s/fake_apiserver.py \`--tls --rootfs DIR\`) serves on 127.0.0.1 with TLS and client certificates; its kubeconfig's current context authenticates with the client certificate, and taskbox and the raw clients use the same certificate. Its pods are chroots of the root filesystem tests/k8s/rootfs.sh builds (busybox and the host's python3); every pods/exec waits ${meta.fakeExecDelayMs} ms before starting its process (the fake's stand-in for the kubelet and the runtime), in the baselines and in taskbox's execs alike. One taskbox binary (\`taskbox serve\` on stdio, the official MCP SDK client, one call at a time) has one k8s provider instance per cell in its config (\`kubeconfig\` and \`kind\`, every other setting at its default; \`"supervisor"\` set explicitly, to \`"python3"\` or, in the cells marked static, to \`"static"\` (the default since the static supervisor became the default where it runs in the pod): the static native supervisor, copied beside the bench's copy of taskbox as installed, and into the cell's pod by its first verb, before anything is timed, runs the verbs there; so start_task's exec is that copy's \`start\` and its split against python3's start-up says nothing); its plugins are those of TASKBOX_PLUGIN_PATH.${meta.staticSupervisor ? ` taskbox-supervisor-static: sha256 ${meta.staticSupervisor.sha256.slice(0, 16)}…, built ${meta.staticSupervisor.mtime}.` : ""}`,
    "",
    `Per cell: one sandbox (\`create_sandbox\` with \`provider\`), a running task (\`echo ready; exec ${K8S_SLEEP.join(" ")}\`) and a finished one (\`echo done\`), made before anything is timed. Per run, the cells take turns (the order rotated each run); on each cell the raw exec of \`true\`, the REST GET, each get_task's exec sent raw, get_task on the running task (state checked \`running\`), get_task on the finished task (checked \`succeeded\` with its output), start_task's exec sent raw, the raw exec of python3, start_task (\`true\`) and create_sandbox take turns two calls at a time, in that order; then each sandbox that run made is killed with kill_sandbox (timed one by one). Every raw exec's Status is checked \`Success\`. Latency is \`performance.now()\` around each call in the client.`,
    "",
  );
  writeFileSync(join(dir, "k8s.md"), md.join("\n"));
  writeFileSync(join(dir, "k8s.json"), JSON.stringify({ meta, summary: sum, runs, many }, null, 2) + "\n");
}

// --- main ----------------------------------------------------------------------

// Why the fake cannot run here, or null.
function cannotRun() {
  if (process.getuid?.() !== 0) return "not root: the fake apiserver's pods are chroots (run bench/run.sh as root)";
  for (const tool of ["python3", "openssl", "flock"])
    try {
      execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
    } catch {
      return `${tool} is missing: the fake apiserver needs it`;
    }
  return null;
}

async function main() {
  const srcBin = process.env.TASKBOX_BIN;
  if (!srcBin) throw new Error("TASKBOX_BIN is not set: run bench/run.sh");
  const runs = Number(process.env.BENCH_K8S_RUNS || 3);
  const n = Number(process.env.BENCH_K8S_CALLS || 8);
  const m = Number(process.env.BENCH_K8S_STARTS || 3);
  const many = manyFromEnv("BENCH_K8S_MANY");
  // The first cell's: the running, finished and set-up tasks, each run's
  // start_tasks and raw sends of their exec, the unmeasured burst and its
  // own.
  const perSandbox = 3 + 2 * (LIGHT.starts + runs * m) + 2 * many;
  if (perSandbox > TASK_LIMIT) throw new Error(`${perSandbox} tasks in the first cell's sandbox would pass ${TASK_LIMIT}: fewer runs, starts or waits at once`);
  const kinds = list(process.env.BENCH_K8S_KINDS, "pod,sandbox");
  for (const k of kinds) if (k !== "pod" && k !== "sandbox") throw new Error(`BENCH_K8S_KINDS: ${k}: pod or sandbox`);
  const results = process.env.BENCH_RESULTS || join(here, "results");

  const why = cannotRun();
  if (why) skip(why);
  let plugin = null;
  for (const dir of (process.env.TASKBOX_PLUGIN_PATH || "").split(":").filter(Boolean))
    try {
      plugin ||= fileStamp(join(dir, "k8s.so"));
    } catch {
      // not in this dir
    }
  if (!plugin) throw new Error("no k8s.so in TASKBOX_PLUGIN_PATH");
  // tests/k8s/fake.mjs finds the source and the build tree through these.
  process.env.TASKBOX_SRCDIR ||= top;
  process.env.TASKBOX_BUILDDIR ||= dirname(srcBin);
  let fakeModule;
  try {
    fakeModule = await import("../tests/k8s/fake.mjs");
  } catch (e) {
    skip(`tests/k8s/fake.mjs cannot be loaded (it needs the tests' node_modules: cd tests && npm ci --ignore-scripts): ${e.message}`);
  }

  const scratch = mkdtempSync(join(tmpdir(), "taskbox-bench-k8s-"));
  const { bin, stamp } = copyTaskbox(srcBin, scratch);
  const python = execFileSync("python3", ["--version"], { encoding: "utf8" }).trim();
  const notes = [];
  const supervisors = benchSupervisors("BENCH_K8S_SUPERVISORS", srcBin, scratch, stamp, notes);

  const machine = watchMachine();
  if (process.env.FAKE_APISERVER_EXEC_DELAY)
    notes.push(`FAKE_APISERVER_EXEC_DELAY=${process.env.FAKE_APISERVER_EXEC_DELAY}: the fake's pause before each exec is not its default (0.05 s)`);
  let fake = null;
  let tb = null;
  let clients = null;
  const cells = [];
  let runsOut = [];
  let manyOut = [];
  let setupSeconds = NaN;
  try {
    // --- the fake and the cells ---------------------------------------------
    const ts = performance.now();
    // Its lifetime bounds what a crashed run could leave behind.
    fake = await fakeModule.startFake({ lifetime: 1800 });
    if (!fake) skip("the pods' root filesystem cannot be built here (tests/k8s/rootfs.sh: no busybox)");
    log(`fake apiserver up at ${fake.url} in ${((performance.now() - ts) / 1000).toFixed(1)} s`);
    clients = { exec: rawExecClient(fake.info), rest: restClient(fake.info) };
    const providers = {};
    for (const kind of kinds)
      for (const supervisor of supervisors) {
        const instance = `k8s-${kind}${supervisor === "python3" ? "" : `-${supervisor}`}`;
        providers[instance] = { plugin: "k8s", supervisor, settings: { kubeconfig: fake.kubeconfig, kind } };
        cells.push({ kind, supervisor, instance });
      }
    mkdirSync(join(scratch, "config"), { recursive: true });
    const cfgPath = join(scratch, "config", "k8s.json");
    writeFileSync(cfgPath, JSON.stringify({ default: cells[0].instance, providers }, null, 2));
    tb = await connectTaskbox(bin, join(scratch, "state"), { TASKBOX_CONFIG: cfgPath });
    for (const cell of cells) {
      const tc = performance.now();
      await setupCell(tb, fake, cell);
      log(`${cell.instance}: sandbox ${cell.sandbox_id} (pod ${cell.pod}) ready in ${((performance.now() - tc) / 1000).toFixed(1)} s`);
    }
    setupSeconds = machine.elapsed();

    // --- the runs -------------------------------------------------------------
    runsOut = await cellRuns({
      runs,
      cells,
      ops: OPS,
      log,
      measure: (cell, rec, light) => timeCalls(tb, cell, clients, rec, light ? LIGHT.calls : n, light ? LIGHT.starts : m),
      describe: (c, f) => `${c.instance} get_task ${f(c, "get_task (running)").toFixed(0)} / raw exec ${f(c, RAW).toFixed(0)} ms, start_task ${f(c, "start_task").toFixed(0)}, create ${f(c, "create_sandbox").toFixed(0)} ms`,
    });
    if (many > 0) manyOut = await manyWaitsCells(tb, cells, many, log);
  } finally {
    machine.stop();
    await closeCells(tb, cells, log);
    clients?.rest.close();
    if (fake) await fake.stop().catch((e) => log(`stopping the fake: ${e.message}`));
    const left = await reapLeftovers(K8S_SLEEP);
    if (left) log(`reaped ${left} leftover ${K8S_SLEEP.join(" ")}`);
    removeScratch(scratch, log);
  }

  const meta = {
    date: isoSeconds(new Date()),
    runs,
    calls: n,
    starts: m,
    many,
    light: LIGHT,
    cells: cells.map((c) => ({
      instance: c.instance,
      kind: c.kind,
      supervisor: c.supervisor,
      requests: c.requests,
      tasks: c.tasks,
    })),
    ...stamp,
    plugin,
    python,
    // The fake's pause before each exec's process (FAKE_APISERVER_EXEC_DELAY).
    fakeExecDelayMs: 1000 * Number(process.env.FAKE_APISERVER_EXEC_DELAY || 0.05),
    ...machine.meta(setupSeconds),
    notes,
  };
  writeResults(results, meta, runsOut, manyOut);
  log(`wrote ${join(results, "k8s.md")} in ${meta.seconds.toFixed(0)} s`);
}

runMain(main, log, "k8s");
