// Writes the HTTP results: http.json (every run), http.md (the section,
// also spliced into RESULTS.md between its markers) and http.png.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CONCURRENCY } from "./httpload.mjs";
import { fmt, quantile, summary } from "./stats.mjs";

export const BEGIN = "<!-- http:begin -->";
export const END = "<!-- http:end -->";
const MiB = 2 ** 20;
const OPS = ["ping", "get_task (running)", "get_task (finished)"];
const CELLS = [
  ...OPS.flatMap((op) => CONCURRENCY.map((c) => [op, c, false])),
  ["ping", 64, true],
  ["get_task (running)", 64, true],
];
const cellName = (op, c, shared) => `${op}, ${c} conn${shared ? ", 1 session" : ""}`;
const row = (cells) => `| ${cells.join(" | ")} |`;
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN);
const range = (s) => (s.n ? `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})` : "n/a");
const med = (s) => fmt(s.median);

// Across runs: summary of one metric of one party's cell, and of the
// taskbox/peer ratio of a metric taken inside each run.
function across(runs) {
  const one = (party, cell, m) => summary(runs.map((r) => r.figures[`${party} ${cell}`]?.[m]));
  const rat = (cell, m) => summary(runs.map((r) => ratio(r.figures[`taskbox ${cell}`]?.[m], r.figures[`peer ${cell}`]?.[m])));
  return { one, rat };
}

function verdict(v, op, limit) {
  if (!Number.isFinite(v)) return "NOT MEASURED";
  return ({ "<=": v <= limit, "<": v < limit })[op] ? "PASS" : "FAIL";
}

// gnuplot: requests/s and p99 against connections (medians across runs).
function chart(dir, runs) {
  const { one } = across(runs);
  const series = [
    ["taskbox", "ping"],
    ["taskbox", "get_task (running)"],
    ["taskbox", "get_task (finished)"],
    ["peer", "ping"],
    ["peer", "get_task (running)"],
    ["peer", "get_task (finished)"],
    ["fixed", "ping"],
  ];
  const blocks = [];
  const names = [];
  for (const [party, op] of series) {
    const lines = CONCURRENCY.map((c) => {
      const k = cellName(op, c, false);
      return `${c} ${one(party, k, "rps").median} ${one(party, k, "p99").median}`;
    }).filter((l) => !/NaN/.test(l));
    if (!lines.length) continue;
    blocks.push(lines.join("\n"));
    names.push(party === "fixed" ? "client ceiling (fixed body)" : `${party} ${op}`);
  }
  if (!blocks.length) return "not drawn: nothing measured";
  writeFileSync(join(dir, "http.dat"), blocks.map((b, i) => `# ${names[i]}\n${b}`).join("\n\n\n") + "\n");
  // one colour per op, solid for taskbox, dashed for the peer
  const color = (n) => (/ceiling/.test(n) ? "#000000" : /running/.test(n) ? "#e41a1c" : /finished/.test(n) ? "#377eb8" : "#4daf4a");
  const style = (i) =>
    `'http.dat' index ${i} using 1:COL with linespoints lw 2 pt ${names[i].startsWith("peer") ? 6 : 7} lc rgb '${color(names[i])}' ` +
    `dt ${names[i].startsWith("peer") ? 2 : /ceiling/.test(names[i]) ? 3 : 1} title '${names[i]}' noenhanced`;
  const gp = [
    "set terminal pngcairo size 1400,600 font 'sans,10' noenhanced",
    "set output 'http.png'",
    "set multiplot layout 1,2 title 'HTTP: taskbox beside the SDK peer, medians across runs'",
    "set logscale x 2",
    "set xtics (1, 16, 64)",
    "set xrange [0.8:80]",
    "set logscale y",
    "set xlabel 'connections (one session each)'",
    "set grid",
    "set key top left",
    "set title 'throughput'",
    "set ylabel 'requests/s (log scale)'",
    `plot ${blocks.map((_, i) => style(i).replace("COL", "2")).join(", \\\n  ")}`,
    "set title 'latency p99'",
    "set ylabel 'ms (log scale)'",
    `plot ${blocks.map((_, i) => style(i).replace("COL", "3")).join(", \\\n  ")}`,
    "unset multiplot",
  ].join("\n");
  const r = spawnSync("gnuplot", [], { cwd: dir, input: gp, encoding: "utf8" });
  if (r.error || r.status !== 0) return `not drawn: gnuplot ${r.error ? "is missing" : "failed: " + r.stderr.trim()}`;
  return null;
}

// An error as its HTTP status and JSON-RPC message, for a table cell.
const shortError = (e) => {
  const m = e.match(/"message":"([^"]+)"/);
  const h = e.match(/HTTP \d+/);
  return (h ? `${h[0]}: ` : "") + (m ? m[1] : e).replace(/\|/g, "/").slice(0, 120);
};

function waitRows(waits) {
  const cols = [
    ["HTTP, defaults", waits.http],
    [`HTTP, ${waits.httpSized?.args || "sized"}`, waits.httpSized],
    ["stdio, defaults", waits.stdio],
  ].map(([name, w]) => [name, w || {}]);
  const kib = (b) => fmt(b / 1024);
  const mib = (b) => fmt(b / MiB);
  const single = waits.singleHttp || [];
  const rows = [
    ["waits sent / answered at the task's end / failed", (w) => (w.waits ? `${w.waits} / ${w.answered} / ${w.failed}` : "n/a"), "", null],
    ["…of them returned before the tasks ended (refused or failed; should be 0)", (w) => fmt(w.returnedBeforeTaskEnd ?? NaN), "", null],
    ["…the first such error", (w) => (w.earlyError ? `"${shortError(w.earlyError)}"` : w.waits ? "none" : "n/a"), "", null],
    ["time to send them all (s)", (w) => fmt(w.sendS ?? NaN), "", null],
    ["server RSS before (MiB)", (w) => mib(w.rssBefore), "", null],
    ["server RSS while they wait, max (MiB)", (w) => mib(w.rssDuring), "< 64 MiB", (w) => verdict(w.rssDuring / MiB, "<", 64)],
    ["RSS per parked wait (KiB)", (w) => kib(w.rssPerWait), "", null],
    ["server CPU per second of waiting, per 1,000 parked waits (ms/s)", (w) => fmt(w.cpuMsPerSecPer1000 ?? NaN), "", null],
    ["plain get_task p50, nothing waiting (ms)", (w) => fmt(w.plainIdleP50 ?? NaN), "", null],
    ["plain get_task p50 while they wait (ms)", (w) => fmt(w.plainDuringP50 ?? NaN), "", null],
    ["plain get_task p99, nothing waiting / while they wait (ms)", (w) => `${fmt(w.plainIdleP99 ?? NaN)} / ${fmt(w.plainDuringP99 ?? NaN)}`, "", null],
    ["plain get_task calls while they wait: answered / refused busy, of 200", (w) =>
      (w.waits ? `${w.plainDuringCalls} / ${w.plainDuringRefused}${w.plainGivenUpAfterMs ? ", then one unanswered for 3 s" : ""}` : "n/a"), "", null],
    ["plain get_task p50 while they wait / nothing waiting", (w) => fmt(w.plainRatio ?? NaN), "<= 2 x",
      (w) => (w.waits && (w.plainGivenUpAfterMs || w.plainDuringRefused) ? "FAIL" : verdict(w.plainRatio, "<=", 2))],
    ["wait returns after its task's exit, p50 (ms)", (w) => fmt(w.lateP50 ?? NaN), "<= 5 ms", (w) => verdict(w.lateP50, "<=", 5)],
    ["wait returns after its task's exit, p99 (ms)", (w) => fmt(w.lateP99 ?? NaN), "<= 10 ms", (w) => verdict(w.lateP99, "<=", 10)],
    ["…max (ms)", (w) => fmt(w.lateMax ?? NaN), "", null],
    ["from the first task's exit to the last answer (ms)", (w) => fmt(w.answerSpanMs ?? NaN), "", null],
    ["…CPU meanwhile: the load client's / the server's (ms; both share 2 cores)", (w) =>
      `${fmt(w.answerClientCpuMs ?? NaN)} / ${fmt(w.answerServerCpuMs ?? NaN)}`, "", null],
  ];
  const out = [row(["figure", ...cols.map((c) => c[0]), "budget", `verdict (${cols.map((c) => c[0]).join(" / ")})`]),
    row(["---", ...cols.map(() => "---:"), "---", "---"])];
  for (const [name, get, budget, judge] of rows)
    out.push(row([name, ...cols.map(([, w]) => get(w)), budget, judge ? cols.map(([, w]) => `**${judge(w)}**`).join(" / ") : ""]));
  const f = waits.floor;
  if (f)
    out.push("", `The load client's floor for the burst over HTTP: the same ${waits.http?.waits ?? "n/a"} calls (a connection each, in 10 sessions) sent to bench/peer/held.mjs, ` +
      "a trivial node server that holds them and answers each task's calls at once when told to, told so at the times the first HTTP run's tasks ended " +
      `(${(waits.http?.exitOffsetsMs || []).map((x) => fmt(x)).join(", ")} ms after the first): from the release to the answer, p50 ${fmt(f.lateP50)} ms, p99 ${fmt(f.lateP99)}, max ${fmt(f.lateMax)}; ` +
      `first release to last answer ${fmt(f.answerSpanMs)} ms, the client's CPU meanwhile ${fmt(f.answerClientCpuMs)} ms${f.failed ? `; ${f.failed} failed: "${shortError(f.firstError)}"` : ""}. ` +
      `taskbox's p50 over HTTP (defaults) is ${fmt(waits.http?.lateP50 / f.lateP50)}x the floor's, its p99 ${fmt(waits.http?.lateP99 / f.lateP99)}x.`);
  out.push("", `One wait at a time over HTTP (defaults), task exit to return, 20 waits: p50 ${fmt(quantile(single, 0.5))} ms, p99 ${fmt(quantile(single, 0.99))} ms ` +
    `(budget 5 / 10 ms: **${verdict(quantile(single, 0.5), "<=", 5)}** / **${verdict(quantile(single, 0.99), "<=", 10)}**); the same over stdio is the "wait:" figure of the stdio section above.`);
  return out;
}

export function httpSection(meta, runs, waits, chartProblem) {
  const { one, rat } = across(runs);
  const md = [BEGIN, "", "## HTTP: taskbox beside the SDK's own Streamable HTTP server", ""];
  md.push(`Written by \`bench/run.sh\` (bench/http.mjs) on ${meta.date}: ${meta.runs} measured runs of the load matrix after one warm-up run, ` +
    "then the parked waits once. Each load figure is the median across runs of that run's value (a cell's p50, p99 and requests/s); " +
    "each ratio is taskbox / peer taken inside one run, then summarised as median (min–max). " +
    "Lower is better for latency and CPU ratios, higher for requests/s.", "");
  md.push(`- taskbox ${meta.taskboxVersion} (\`serve --http\`, default config: the local provider, bearer token set); ` +
    `the peer: @modelcontextprotocol/sdk ${meta.sdk} \`McpServer\` + \`StreamableHTTPServerTransport\` (bench/peer/server.mjs); load client: undici ${meta.undici}`);
  md.push(`- A 2-core machine shared with other work: load average ${meta.loadStart.join(" ")} at the start, ${meta.loadEnd.join(" ")} at the end; ` +
    `the machine was ${fmt(meta.busyPercent)}% busy during this part, of which about ${fmt(meta.othersPercent)}% (of both cores) was work other than this benchmark's processes.`);
  md.push(`- Waiting calls parked without a thread (\`tb_parker_add\` in core/tools or core/protocol): **${meta.parking ? "yes" : "no"}** in the tree measured${meta.parking ? "" : ": each waiting call holds a worker thread (8 by default), so these wait figures are of that code"}.`);
  md.push(`- run time ${fmt(meta.seconds)} s`, "");

  md.push("### Latency (ms)", "");
  md.push(row(["cell", "taskbox p50", "peer p50", "p50 taskbox/peer", "taskbox p99", "peer p99", "p99 taskbox/peer"]));
  md.push(row(["---", "---:", "---:", "---:", "---:", "---:", "---:"]));
  for (const [op, c, shared] of CELLS) {
    const k = cellName(op, c, shared);
    md.push(row([k, med(one("taskbox", k, "p50")), med(one("peer", k, "p50")), range(rat(k, "p50")),
      med(one("taskbox", k, "p99")), med(one("peer", k, "p99")), range(rat(k, "p99"))]));
  }
  md.push("", "### Throughput and CPU", "");
  md.push("Server CPU is the server process's utime+stime over the measured window divided by the requests answered in it (10 ms ticks: coarse at low rates). " +
    "Client CPU is the load client's own, in % of one core: near 100% the figure is client-bound (see the ceiling below).", "");
  md.push(row(["cell", "taskbox req/s", "peer req/s", "req/s taskbox/peer", "taskbox CPU µs/req", "peer CPU µs/req", "CPU/req taskbox/peer", "client CPU % (taskbox / peer cell)"]));
  md.push(row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]));
  for (const [op, c, shared] of CELLS) {
    const k = cellName(op, c, shared);
    md.push(row([k, med(one("taskbox", k, "rps")), med(one("peer", k, "rps")), range(rat(k, "rps")),
      med(one("taskbox", k, "serverUs")), med(one("peer", k, "serverUs")), range(rat(k, "serverUs")),
      `${med(one("taskbox", k, "clientCpu"))} / ${med(one("peer", k, "clientCpu"))}`]));
  }
  md.push("", "### The client's ceiling", "");
  md.push("The same client against bench/peer/fixed.mjs, a trivial node http server that answers every POST with one fixed JSON body " +
    "(no MCP, no session): what the client can measure at most here. A taskbox or peer figure near it is bound by the client, not the server.", "");
  md.push(row(["cell", "p50 (ms)", "p99 (ms)", "req/s", "client CPU %", "fixed server CPU %"]), row(["---", "---:", "---:", "---:", "---:", "---:"]));
  for (const c of CONCURRENCY) {
    const k = cellName("ping", c, false);
    md.push(row([`fixed body, ${c} conn`, med(one("fixed", k, "p50")), med(one("fixed", k, "p99")), med(one("fixed", k, "rps")),
      med(one("fixed", k, "clientCpu")), med(one("fixed", k, "serverCpu"))]));
  }
  const bound = CONCURRENCY.filter((c) => {
    const k = cellName("ping", c, false);
    return one("taskbox", k, "rps").median >= 0.8 * one("fixed", k, "rps").median;
  });
  if (bound.length)
    md.push("", `In this run taskbox's ping at ${bound.join(", ")} connection(s) reached at least 80% of the ceiling: those figures are bound by the client and the machine, not by taskbox (its CPU per request is the better measure there).`);
  md.push("", `### Parked waits: ${meta.waits} concurrent \`get_task\` with \`wait: 30\` on running tasks`, "");
  md.push(waitRows(waits).join("\n"));
  md.push("", chartProblem ? `(Chart ${chartProblem}.)` : "![HTTP throughput and p99](http.png)", "");
  md.push("### Method (HTTP)", "");
  for (const m of [
    "Servers: taskbox `serve --http 127.0.0.1:0` with `TASKBOX_HTTP_TOKEN` set; the peer with the same bearer token checked on every request, its tool `get_task` reading the task's `status.json` and a page (offset, limit 16384) of its `stdout` and `stderr` from disk and checking a running task's pid with `kill(pid, 0)`, returning taskbox's JSON shape as `structuredContent` and a text block, with input and output schemas (zod) as the SDK's docs show; ping is the SDK's own. Both on the same PATH, on loopback.",
    "Client: one Node process; each connection is an undici `Client` (one kept-alive TCP connection, no pipelining) doing raw JSON-RPC POSTs back to back (a closed loop: the next request leaves when the answer is read), with `Accept: application/json, text/event-stream`, `Mcp-Session-Id`, `MCP-Protocol-Version` and `Authorization` headers; answers are parsed (JSON, or the server-sent event carrying the answer) and checked (a get_task must report the expected state). One initialize (+ notifications/initialized) per session, done before any cell; 64 connections per server, connection i carrying session i (\"N conn\": N connections, N sessions), or all carrying session 0 (\"1 session\").",
    "Cells: ping, get_task on one of 16 running tasks (`echo ready; exec sleep N`, cycled over) and on a finished `echo done`, at 1, 16 and 64 connections; 300 ms of warm-up then 1 s measured per cell (the warm-up run: 300 ms each). Inside a run, taskbox's and the peer's cell run back to back, in alternating order; the ceiling's before them.",
    "Latency is `performance.now()` around each request begun in the measured window; requests/s is the count of those over the window.",
    `Parked waits, on a fresh taskbox each: over HTTP as it comes (\`serve --http\`, 16 workers, at most workers x 32 calls in flight), over HTTP with \`--workers\` raised so that limit has room for every wait (the column says the flag), and over stdio as it comes. In each: a sandbox with one unrelated running task; 50 + 200 plain get_task calls on it in a row (the idle p50); VmRSS; 10 tasks \`sleep 24; exec STAMP\` (STAMP is bench/stamp.c, as in the stdio bench; until 2026-12 \`date +%s%N\`, which charged taskbox a millisecond or more); ${meta.waits} get_task calls with \`wait: 30\` and \`stdout_offset: 20\` (so only the task's end ends them), cycled over the 10 tasks, sent at once — over HTTP each on a connection of its own, in 10 sessions; over stdio all on the one pipe. After 2 s: VmRSS sampled every 0.5 s and utime+stime over a 10 s window; then 50 + 200 plain get_task calls in a row on their own connection and session (HTTP) or on the same pipe (stdio), each given up after 3 s, the 200 timed (the same 50 first as for the idle p50; until 2026-12 the 200 came straight after the quiet window, cold, against a warmed idle figure). When the tasks end: each wait's return (client wall clock) minus its task's printed exit time; the time from the first task's exit to the last answer, and the CPU the load client (this Node process, process.cpuUsage) and the server (utime+stime, 10 ms ticks) spent from the plain calls' end to the last answer: both idle until the tasks end, both on the same 2 cores while the answers come. Before all that, over HTTP only, 20 single waits one at a time (\`sleep 0.2; exec STAMP\`), as the stdio bench does.`,
  ]) md.push(`- ${m}`);
  if (meta.notes.length) md.push("", "### Notes (HTTP)", "", ...meta.notes.map((n) => `- ${n}`));
  md.push("", END);
  return md.join("\n");
}

// Replaces the HTTP section of RESULTS.md (or appends it).
export function spliceInto(resultsMd, section) {
  if (!existsSync(resultsMd)) {
    writeFileSync(resultsMd, `# taskbox benchmark results\n\n${section}\n`);
    return;
  }
  const text = readFileSync(resultsMd, "utf8");
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  const next = a >= 0 && b > a ? text.slice(0, a) + section + text.slice(b + END.length) : `${text.trimEnd()}\n\n${section}\n`;
  writeFileSync(resultsMd, next);
}

export function writeHttpResults(dir, meta, runs, waits) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "http.json"), JSON.stringify({ meta, runs: runs.map((r) => r.figures), waits }, null, 1) + "\n");
  const chartProblem = runs.length ? chart(dir, runs) : "not drawn: no measured run";
  const section = httpSection(meta, runs, waits, chartProblem);
  writeFileSync(join(dir, "http.md"), section + "\n");
  spliceInto(join(dir, "RESULTS.md"), section);
}
