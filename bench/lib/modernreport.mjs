// Writes the modern-era results: modern.json (every run's figures and the
// summaries) and modern.md (tables, headline ratios, load, method).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROFILE_FUNCTIONS } from "./modernprofile.mjs";
import { fmt, summary } from "./stats.mjs";

const row = (cells) => `| ${cells.join(" | ")} |`;
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN);
const range = (s) => (s.n ? `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})` : "n/a");
const med = (s) => (s.n ? fmt(s.median) : "n/a");
const us = (ms) => ms * 1000;

// Across runs: one figure of one key, and the ratio (or difference) of two
// keys' figure taken inside each run.
function across(runs, part) {
  const one = (k, m) => summary(runs.map((r) => r[part][k]?.[m]));
  const rat = (a, b, m) => summary(runs.map((r) => ratio(r[part][a]?.[m], r[part][b]?.[m])));
  const diff = (a, b, m) => summary(runs.map((r) => us(r[part][a]?.[m] - r[part][b]?.[m])));
  const sumPids = (k) => summary(runs.map((r) => r[part][k]?.serverUs));
  return { one, rat, diff, sumPids };
}

const OPS = [
  ["get_task", "get_task (running)"],
  ["baseline", "ping-like: legacy `ping` / modern `server/discover`"],
];
const CONNS = [1, 4];

function stdioSection(runs, calls) {
  const { one, rat, diff } = across(runs, "stdio");
  const out = [
    "### 1. stdio: a legacy process against a modern process",
    "",
    `${calls} sequential calls per side, op and run, interleaved 50 at a time. Latency in ms; Δ p50 is modern − legacy in µs; server CPU is the server process's CPU time per call (all its threads, ns resolution).`,
    "",
    row(["op", "legacy p50", "modern p50", "p50 modern/legacy", "Δ p50 (µs)", "legacy p99", "modern p99", "p99 modern/legacy", "server CPU µs/call legacy / modern", "CPU/call modern/legacy"]),
    row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]),
  ];
  for (const [op, label] of OPS) {
    const L = `legacy ${op}`;
    const M = `modern ${op}`;
    out.push(row([label, med(one(L, "p50")), med(one(M, "p50")), range(rat(M, L, "p50")), range(diff(M, L, "p50")),
      med(one(L, "p99")), med(one(M, "p99")), range(rat(M, L, "p99")),
      `${med(one(L, "serverUs"))} / ${med(one(M, "serverUs"))}`, range(rat(M, L, "serverUs"))]));
  }
  return out;
}

function directSection(runs) {
  const { one, rat, diff } = across(runs, "direct");
  const out = [
    "### 2. HTTP direct: legacy in a session against modern stateless POSTs, same server",
    "",
    "Latency in ms; Δ p50 is modern − legacy in µs. Server CPU is the taskbox process's CPU time per answered request; client CPU is the load client's, in % of one core.",
    "",
    row(["cell", "legacy p50", "modern p50", "p50 modern/legacy", "Δ p50 (µs)", "legacy p99", "modern p99", "p99 modern/legacy"]),
    row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]),
  ];
  const cells = OPS.flatMap(([op, label]) => CONNS.map((c) => [`${op} c${c}`, `${label}, ${c} conn`]));
  for (const [k, label] of cells) {
    const L = `legacy ${k}`;
    const M = `modern ${k}`;
    out.push(row([label, med(one(L, "p50")), med(one(M, "p50")), range(rat(M, L, "p50")), range(diff(M, L, "p50")),
      med(one(L, "p99")), med(one(M, "p99")), range(rat(M, L, "p99"))]));
  }
  out.push("", row(["cell", "legacy req/s", "modern req/s", "req/s modern/legacy", "server CPU µs/req legacy / modern", "CPU/req modern/legacy", "server cores busy legacy / modern", "client CPU % legacy / modern"]));
  out.push(row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]));
  const cores = (k) => summary(runs.map((r) => (r.direct[k]?.serverUs * r.direct[k]?.rps) / 1e6));
  const clientBound = [];
  for (const [k, label] of cells) {
    const L = `legacy ${k}`;
    const M = `modern ${k}`;
    out.push(row([label, med(one(L, "rps")), med(one(M, "rps")), range(rat(M, L, "rps")),
      `${med(one(L, "serverUs"))} / ${med(one(M, "serverUs"))}`, range(rat(M, L, "serverUs")),
      `${med(cores(L))} / ${med(cores(M))}`,
      `${med(one(L, "clientCpu"))} / ${med(one(M, "clientCpu"))}`]));
    if (one(L, "clientCpu").median >= 80 || one(M, "clientCpu").median >= 80) clientBound.push(label);
  }
  out.push("", "Server cores busy is server CPU per request times requests/s: how much of the two cores the server got. Where both eras' servers got about the same share, the requests/s ratio is the inverse of the CPU-per-request ratio: the server is bound by the CPU the machine has left, not by waiting.");
  if (clientBound.length) out.push("", `The load client used 80% or more of a core in: ${clientBound.join("; ")}. Those requests/s figures are bound by the client as much as by the server; their CPU per request is the better measure.`);
  return out;
}

function balancerSection(runs, spread) {
  const { one, rat } = across(runs, "balancer");
  if (!runs.some((r) => Object.keys(r.balancer).length)) return ["### 3. HTTP through haproxy", "", "Not measured (see the notes)."];
  const out = [
    "### 3. HTTP through haproxy against direct to a replica (modern requests)",
    "",
    "direct: the first replica, no balancer; lb1: haproxy with that replica alone behind it; lb3: haproxy round robin over three replicas on one state directory. Latency in ms; ratios are balancer/direct inside each run.",
    "",
    row(["cell", "direct p50", "lb1 p50", "p50 lb1/direct", "lb3 p50", "p50 lb3/direct", "direct p99", "lb1 p99", "p99 lb1/direct", "lb3 p99", "p99 lb3/direct"]),
    row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]),
  ];
  const cells = OPS.flatMap(([op, label]) => CONNS.map((c) => [`${op} c${c}`, `${op === "baseline" ? "server/discover" : label}, ${c} conn`]));
  for (const [k, label] of cells)
    out.push(row([label, med(one(`direct ${k}`, "p50")), med(one(`lb1 ${k}`, "p50")), range(rat(`lb1 ${k}`, `direct ${k}`, "p50")),
      med(one(`lb3 ${k}`, "p50")), range(rat(`lb3 ${k}`, `direct ${k}`, "p50")),
      med(one(`direct ${k}`, "p99")), med(one(`lb1 ${k}`, "p99")), range(rat(`lb1 ${k}`, `direct ${k}`, "p99")),
      med(one(`lb3 ${k}`, "p99")), range(rat(`lb3 ${k}`, `direct ${k}`, "p99"))]));
  out.push("", "CPU per request: all the party's server processes (direct: the replica; lb1: haproxy + the replica; lb3: haproxy + the three replicas), then haproxy's share alone.", "");
  out.push(row(["cell", "direct req/s", "lb1 req/s", "req/s lb1/direct", "lb3 req/s", "req/s lb3/direct", "CPU µs/req direct / lb1 / lb3", "of which haproxy lb1 / lb3", "of which the replicas: direct / lb1 / lb3", "client CPU % direct / lb1 / lb3"]));
  out.push(row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]));
  const hap = (k) => summary(runs.map((r) => r.balancer[k]?.pidUs?.[0]));
  const reps = (k) => summary(runs.map((r) => (r.balancer[k]?.pidUs || []).slice(1).reduce((a, b) => a + b, 0)));
  for (const [k, label] of cells)
    out.push(row([label, med(one(`direct ${k}`, "rps")), med(one(`lb1 ${k}`, "rps")), range(rat(`lb1 ${k}`, `direct ${k}`, "rps")),
      med(one(`lb3 ${k}`, "rps")), range(rat(`lb3 ${k}`, `direct ${k}`, "rps")),
      `${med(one(`direct ${k}`, "serverUs"))} / ${med(one(`lb1 ${k}`, "serverUs"))} / ${med(one(`lb3 ${k}`, "serverUs"))}`,
      `${med(hap(`lb1 ${k}`))} / ${med(hap(`lb3 ${k}`))}`,
      `${med(one(`direct ${k}`, "serverUs"))} / ${med(reps(`lb1 ${k}`))} / ${med(reps(`lb3 ${k}`))}`,
      `${med(one(`direct ${k}`, "clientCpu"))} / ${med(one(`lb1 ${k}`, "clientCpu"))} / ${med(one(`lb3 ${k}`, "clientCpu"))}`]));
  if (spread) out.push("", `Round robin at work: 300 modern get_task calls through lb3 before the runs were answered ${spread.join(" / ")} by the three replicas (their /metrics tools/call counts).`);
  return out;
}

function sizesSection(sizes) {
  const out = ["### On the wire", "", "stdio: bytes of one request line and of its answer line (the same JSON as the HTTP bodies). HTTP: mean body bytes per request and per answer, counted over every run (the warm-up and the unmeasured warm parts of each slice included), and how many answers came as an event stream rather than one JSON body.", ""];
  out.push(row(["stdio", "request line", "answer line"]), row(["---", "---:", "---:"]));
  for (const [k, [a, b]] of Object.entries(sizes.stdio || {})) out.push(row([k, a, b]));
  out.push("", row(["HTTP party and op", "answers", "request body", "answer body", "event-stream answers"]), row(["---", "---:", "---:", "---:", "---:"]));
  const party = { "legacy direct": "legacy, direct (2.)", modern: "modern, direct (2.)", direct: "modern, direct (3.)", lb1: "modern via lb1 (3.)", lb3: "modern via lb3 (3.)" };
  for (const [k, s] of Object.entries(sizes.http || {})) {
    const [, who, op] = /^(.*) (baseline|get_task)$/.exec(k) || [null, k, ""];
    out.push(row([`${party[who] || who}, ${op === "baseline" ? (who === "legacy direct" ? "ping" : "server/discover") : op}`, s.answers, fmt(s.requestBytes, 4), fmt(s.answerBytes, 4), s.sse]));
  }
  return out;
}

// Instructions per request under callgrind (bench/lib/modernprofile.mjs).
function instructionsSection(ins, n) {
  if (!ins) return [];
  const k = (x) => (Number.isFinite(x) ? `${(x / 1000).toFixed(1)}k` : "n/a");
  const cases = [
    ["stdio get_task", "stdio-legacy get_task", "stdio-modern get_task"],
    ["stdio ping-like", "stdio-legacy baseline", "stdio-modern baseline"],
    ["HTTP get_task", "http-legacy get_task", "http-modern get_task"],
    ["HTTP ping-like", "http-legacy baseline", "http-modern baseline"],
  ];
  const out = [
    "### Where the envelope's cost goes: instructions per request (callgrind)",
    "",
    `Each case run twice under valgrind's callgrind on the same binary, state directory and task, with 10 and with ${10 + n} requests one after another; the difference over ${n} is one request's cost, startup cancelled out. An instruction count does not depend on what else the machine is doing, so these hold where the latencies above are blurred by the load; it counts user-space instructions only (not the kernel's work for the pipe or the socket, not waiting), and valgrind runs one thread at a time.`,
    "",
    row(["case", "legacy (instructions/request)", "modern", "modern/legacy", "modern − legacy"]),
    row(["---", "---:", "---:", "---:", "---:"]),
    ...cases.map(([label, a, b]) => row([label === "stdio ping-like" || label === "HTTP ping-like" ? `${label} (ping / server/discover)` : label,
      k(ins[a]?.total), k(ins[b]?.total), fmt(ratio(ins[b]?.total, ins[a]?.total)), k(ins[b]?.total - ins[a]?.total)])),
    "",
    "Inclusive instructions per request in the functions that differ between the eras (a function's callees included; blank: not called, or under 100 instructions):",
    "",
    row(["function", "what", ...cases.flatMap(([label]) => [`${label} legacy`, "modern"])]),
    row(["---", "---", ...cases.flatMap(() => ["---:", "---:"])]),
  ];
  for (const [fn, what] of PROFILE_FUNCTIONS) {
    const cells = cases.flatMap(([, a, b]) => [a, b].map((c) => (ins[c]?.fns?.[fn] >= 100 ? k(ins[c].fns[fn]) : "")));
    if (cells.some(Boolean)) out.push(row([`\`${fn}\``, what, ...cells]));
  }
  const st = ins["http-modern get_task"]?.fns?.http_modern_status;
  const tot = ins["http-modern get_task"]?.total;
  if (st > 20000)
    out.push("", `\`http_modern_status\` (core/transport/http_modern.c) costs ${k(st)} instructions per modern HTTP get_task, ${fmt((100 * st) / tot)}% of the request and ${fmt((100 * st) / (tot - ins["http-legacy get_task"]?.total))}% of what modern adds over legacy. It picks the HTTP status of a modern answer by parsing the whole answer again (\`json_loadb\`) whenever the answer is under 8 KiB and its text contains \`"error"\` anywhere; get_task's result always carries an \`"error": null\` member (the task's error field), so every modern get_task answer is parsed a second time, on the server's one HTTP (libmicrohttpd) thread, only to find it is a result. A server/discover answer has no such member and does not pay it.`);
  const jl = (c) => ins[c]?.fns?.json_loadb;
  if (Number.isFinite(jl("http-modern get_task")) && jl("http-modern get_task") > 0)
    out.push("", `JSON parsing (\`json_loadb\`) is ${fmt((100 * jl("http-legacy get_task")) / ins["http-legacy get_task"].total)}% of a legacy HTTP get_task's instructions and ${fmt((100 * jl("http-modern get_task")) / ins["http-modern get_task"].total)}% of a modern one's; on stdio ${fmt((100 * jl("stdio-legacy get_task")) / ins["stdio-legacy get_task"].total)}% and ${fmt((100 * jl("stdio-modern get_task")) / ins["stdio-modern get_task"].total)}%.`);
  return out;
}

function headline(runs) {
  const s = across(runs, "stdio");
  const d = across(runs, "direct");
  const b = across(runs, "balancer");
  const lines = [
    `- stdio get_task (running), p50 modern/legacy: **${range(s.rat("modern get_task", "legacy get_task", "p50"))}** (p99 ${range(s.rat("modern get_task", "legacy get_task", "p99"))}; Δ p50 ${range(s.diff("modern get_task", "legacy get_task", "p50"))} µs)`,
    `- HTTP direct get_task, 1 conn, p50 modern/legacy: **${range(d.rat("modern get_task c1", "legacy get_task c1", "p50"))}** (p99 ${range(d.rat("modern get_task c1", "legacy get_task c1", "p99"))}); 4 conn req/s modern/legacy: **${range(d.rat("modern get_task c4", "legacy get_task c4", "rps"))}**, server CPU/req ${range(d.rat("modern get_task c4", "legacy get_task c4", "serverUs"))}`,
  ];
  if (runs.some((r) => Object.keys(r.balancer).length))
    lines.push(
      `- through haproxy, modern get_task, 1 conn, p50 balancer/direct: lb1 **${range(b.rat("lb1 get_task c1", "direct get_task c1", "p50"))}**, lb3 **${range(b.rat("lb3 get_task c1", "direct get_task c1", "p50"))}**; 4 conn req/s balancer/direct: lb1 **${range(b.rat("lb1 get_task c4", "direct get_task c4", "rps"))}**, lb3 **${range(b.rat("lb3 get_task c4", "direct get_task c4", "rps"))}**`,
    );
  return lines;
}

export function writeModernResults(dir, meta, runs) {
  mkdirSync(dir, { recursive: true });
  const n = runs.length;
  const loads = summary(meta.loadSamples);
  const md = [
    "## The modern era (MCP 2026-07-28) against the legacy one, and a balancer against direct",
    "",
    `Written by \`bench/run.sh\` (bench/modern.mjs) on ${meta.date}: ${n} measured runs after one warm-up run. Each figure is the median across runs of that run's value; each ratio is taken inside one run against the baseline measured in the same run (interleaved with it), then summarised as median (min–max) across runs. Lower is better for latency and CPU ratios, higher for requests/s.`,
    "",
    `- taskbox ${meta.taskboxVersion}: ${meta.taskboxBin} (sha256 ${meta.taskboxSha256.slice(0, 16)}…, built ${meta.taskboxMtime}), copied once so every process ran the same file; default config (the local provider), all processes on one state directory, bearer token set; ${meta.haproxy}; node ${meta.node}, undici ${meta.undici}.`,
    `- Machine: ${meta.cores} cores (${meta.cpu}), with other load on it: load average ${meta.loadStart.join(" ")} at the start, ${meta.loadEnd.join(" ")} at the end; the 1-minute load sampled every 2 s during the run: median ${fmt(loads.median)}, min ${fmt(loads.min)}, max ${fmt(loads.max)}. The machine was ${fmt(meta.busyPercent)}% busy during the setup and the timed runs, of which about ${fmt(meta.othersPercent)}% (of both cores) was work other than this benchmark's processes.`,
    `- run time ${meta.seconds.toFixed(0)} s (setup and timed runs ${Number.isFinite(meta.timedSeconds) ? meta.timedSeconds.toFixed(0) : "n/a"} s; the rest is the callgrind counts)`,
    ...meta.notes.map((x) => `- Note: ${x}`),
    "",
    "Per run (measured runs only):",
    "",
    row(["run", "seconds", "machine busy %", "other work %", "load average at its end"]),
    row(["---", "---:", "---:", "---:", "---"]),
    ...runs.map((r, i) => row([i + 1, r.machine.seconds.toFixed(1), fmt(r.machine.busyPercent), fmt(r.machine.othersPercent), r.machine.load.join(" ")])),
    "",
    "### Headline",
    "",
    ...headline(runs),
    "",
    ...stdioSection(runs, meta.calls),
    "",
    ...directSection(runs),
    "",
    ...balancerSection(runs, meta.spread),
    "",
    ...sizesSection(meta.sizes),
    "",
    ...instructionsSection(meta.instructions, meta.profileN),
    ...(meta.instructions ? [""] : []),
    "### Method",
    "",
    `One taskbox binary, one state directory, one sandbox with one running task (\`echo ready; exec sleep 2988\`, started through the legacy stdio process before anything is timed); every get_task is \`{sandbox_id, task_id}\` on that task and every answer is checked (state \`running\`; for modern answers \`resultType: "complete"\` and \`_meta["io.modelcontextprotocol/serverInfo"]\`; HTTP status 200). Modern requests carry \`params._meta\` with \`io.modelcontextprotocol/protocolVersion: "2026-07-28"\` and \`io.modelcontextprotocol/clientCapabilities: {}\`; there is no \`ping\` in 2026-07-28, so the ping-like baseline is legacy \`ping\` against modern \`server/discover\` (whose answer is larger: see "On the wire").`,
    "",
    `**stdio**: two \`taskbox serve\` processes, both alive for the whole run: a legacy one (initialize + notifications/initialized first) and a modern one whose first line is a modern tools/call; one raw newline-delimited JSON-RPC client (bench/lib/rawstdio.mjs), one request in flight. Per run and op, ${meta.calls} calls per side (the warm-up run a quarter of that), the two sides taking turns 50 calls at a time, the first side alternating between runs and ops; latency is \`performance.now()\` from write to parsed answer. Server CPU per call is the sum of the process's threads' \`/proc/PID/task/*/schedstat\` run time over its own chunks, divided by the calls.`,
    "",
    `**HTTP**: three \`taskbox serve --http 127.0.0.1:0\` replicas (\`TASKBOX_HTTP_TOKEN\` set, \`Authorization: Bearer\` sent) on that state directory; the load client is bench/lib/httpclient.mjs's: undici \`Client\`s (one kept-alive TCP connection each, no pipelining) doing raw JSON-RPC POSTs back to back (a closed loop), \`Accept: application/json, text/event-stream\`, answers parsed (JSON or the event carrying the answer) and checked, by the same code for both eras (bench/lib/modernload.mjs \`post\`). Legacy: one session per connection (initialize + initialized done before timing), \`Mcp-Session-Id\` and \`MCP-Protocol-Version: 2025-11-25\` on each request. Modern: no session, headers \`MCP-Protocol-Version: 2026-07-28\`, \`Mcp-Method\`, and \`Mcp-Name: get_task\` for tools/call; each such request is served by a fresh protocol object on the server. Each cell (op × 1 or 4 connections) is cut into ${meta.slices} slices per party; in each slice the party's workers run 100 ms unmeasured then 500 ms measured (the warm-up run: one slice of 300 + 300 ms); the parties take turns slice by slice, the order reversed every other slice and between cells and runs, so a change in the machine's load hits all alike. p50/p99 are over the requests begun inside the measured windows, requests/s is their count over the summed windows; server CPU per request is the summed schedstat run time of the party's server processes over its own windows.`,
    "",
    `**haproxy**: \`haproxy -db -f cfg\` with the configuration of tests/http/replicas.mjs (mode http, round robin, \`option httpchk GET /healthz\` every 300 ms, \`retry-on conn-failure\`, a stick table on \`Mcp-Session-Id\` which modern requests do not carry), one instance with the first replica alone behind it (lb1), one with all three (lb3); haproxy keeps client and server connections alive (its default). "direct" is modern requests to the first replica on connections of their own, measured in the same slices as lb1 and lb3. Three replicas and haproxy and the client on two cores: lb3's throughput is bounded by the cores, not by having more replicas.`,
    "",
  ].join("\n");
  writeFileSync(join(dir, "modern.md"), md);
  const strip = (part) => Object.fromEntries(Object.entries(part).map(([k, v]) => [k, v]));
  writeFileSync(join(dir, "modern.json"), JSON.stringify({
    meta,
    runs: runs.map((r) => ({ machine: r.machine, stdio: strip(r.stdio), direct: strip(r.direct), balancer: strip(r.balancer) })),
  }, null, 2) + "\n");
}
