// Writes the results: RESULTS.md (tables), results.json (every run's figures
// and ratios), latency.dat + latency.png (the latency distributions).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fmt } from "./stats.mjs";

const row = (cells) => `| ${cells.join(" | ")} |`;
const line3 = (s) => `${fmt(s.median)} | ${fmt(s.min)} | ${fmt(s.max)}`;

// The latency series drawn in each panel of the chart.
const PANELS = [
  {
    title: "round trips and reads",
    series: [
      "echo ping",
      "taskbox ping",
      "DC ping",
      "taskbox get_task (running)",
      "taskbox get_task (finished)",
      "DC read_process_output (running)",
      "DC read_process_output (finished)",
    ],
  },
  {
    title: "spawns, starts and cancels",
    series: [
      "sh -c true spawn",
      "python3 -I -S -c pass spawn",
      "supervisor start verb, run directly",
      "taskbox start_task",
      "DC start_process",
      "taskbox cancel_task",
      "DC force_terminate",
      "get_task with 128 running",
    ],
  },
];

// One distinct colour per series of a panel.
const COLORS = ["#000000", "#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00", "#a65628", "#f781bf", "#999999", "#17becf"];

// Writes latency.dat (one gnuplot index per series: sorted ms and the
// cumulative fraction) and renders latency.png when gnuplot is there.
function chart(dir, pooled) {
  const blocks = [];
  const plots = [];
  for (const panel of PANELS) {
    const cmds = [];
    for (const name of panel.series) {
      const s = pooled[name];
      if (!s || s.length === 0) continue;
      const sorted = [...s].sort((a, b) => a - b);
      const rows = sorted.map((ms, i) => `${ms.toFixed(4)} ${((i + 1) / sorted.length).toFixed(5)}`);
      const color = COLORS[cmds.length % COLORS.length];
      cmds.push(`'latency.dat' index ${blocks.length} using 1:2 with steps lw 2 lc rgb '${color}' title '${name} (n=${s.length})' noenhanced`);
      blocks.push(`# ${name}\n${rows.join("\n")}`);
    }
    plots.push({ title: panel.title, cmds });
  }
  writeFileSync(join(dir, "latency.dat"), blocks.join("\n\n\n") + "\n");
  const gp = [
    "set terminal pngcairo size 1600,700 font 'sans,10' noenhanced",
    "set output 'latency.png'",
    "set multiplot layout 1,2 title 'Latency distributions through the official MCP SDK client (all measured runs pooled)'",
    "set logscale x",
    "set xlabel 'latency (ms, log scale)'",
    "set ylabel 'fraction of calls at or below'",
    "set yrange [0:1]",
    "set grid",
    "set key bottom right",
    ...plots.flatMap((p) => (p.cmds.length ? [`set title '${p.title}'`, `plot ${p.cmds.join(", \\\n  ")}`] : [])),
    "unset multiplot",
  ].join("\n");
  const r = spawnSync("gnuplot", [], { cwd: dir, input: gp, encoding: "utf8" });
  if (r.error || r.status !== 0) return `not drawn: gnuplot ${r.error ? "is missing" : "failed: " + r.stderr.trim()}`;
  return null;
}

// Pools every run's samples of each series (for the chart).
function pool(runs) {
  const pooled = {};
  for (const run of runs) for (const [k, v] of Object.entries(run.samples)) (pooled[k] ||= []).push(...v);
  return pooled;
}

export function writeResults(dir, meta, runs, sum) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "results.json"),
    JSON.stringify({ meta, runs: runs.map((r) => ({ figures: r.figures, ratios: r.ratios })), summary: sum }, null, 1) + "\n",
  );
  const chartProblem = chart(dir, pool(runs));
  const md = [];
  md.push("# taskbox benchmark results", "");
  md.push(`Written by \`bench/run.sh\` on ${meta.date}. ${meta.runs} measured runs after one warm-up run; ` +
    "each figure is the median, min and max across runs of that run's value (a latency's value in a run is the p50 of its calls). " +
    "Ratios are taken pair by pair inside each run, then summarised.", "");
  md.push("## Machine and load", "");
  md.push(`- ${meta.cpu}, ${meta.cores} cores, ${meta.memory}; ${meta.kernel}; Node ${meta.node}`);
  md.push(`- taskbox ${meta.taskboxVersion}; @modelcontextprotocol/sdk ${meta.sdk}; @wonderwhy-er/desktop-commander ${meta.dc}`);
  md.push(`- load average at start ${meta.loadStart.join(" ")}, at end ${meta.loadEnd.join(" ")}; ` +
    `the whole machine was ${fmt(meta.busyPercent)}% busy during the run (all cores; other work on the machine included)`);
  md.push(`- run time ${fmt(meta.seconds)} s`, "");
  md.push("## Budgets (from the design)", "");
  md.push("A budget passes when its median across runs meets the limit; \"worst run\" says whether the worst single run met it too.", "");
  md.push(row(["budget", "measured: median", "min", "max", "limit", "verdict", "worst run"]));
  md.push(row(["---", "---:", "---:", "---:", "---:", "---", "---"]));
  for (const b of sum.budgets)
    md.push(row([b.what, fmt(b.median), fmt(b.min), fmt(b.max), `${b.op} ${b.limit} ${b.unit}`, `**${b.verdict}**`,
      b.n ? (b.worstHolds ? "holds" : "fails") : "n/a"]));
  md.push("", "## Ratios (pair by pair in each run)", "");
  md.push(row(["ratio", "median", "min", "max"]), row(["---", "---:", "---:", "---:"]));
  for (const [k, s] of Object.entries(sum.ratios)) md.push(row([k, line3(s)]));
  const sections = [
    ["Latency (ms, the p50 of each run's calls)", (k) => /p50 \(ms\)$/.test(k) && !/with \d+ running|^wait:/.test(k)],
    ["Waiting: a task's exit to the return of a get_task waiting for it", (k) => /^wait:/.test(k)],
    ["Connect: spawn + initialize (ms), and memory", (k) => /connect|idle RSS/.test(k)],
    ["Scale: one sandbox with N running, idle tasks", (k) => /with \d+ /.test(k)],
    ["Throughput", (k) => /MiB\/s|1 GiB/.test(k)],
    ["Fidelity", (k) => /left alive/.test(k)],
    ["Load on the machine during each run", (k) => /busy|load average/.test(k)],
  ];
  for (const [title, pick] of sections) {
    md.push("", `## ${title}`, "", row(["figure", "median", "min", "max"]), row(["---", "---:", "---:", "---:"]));
    for (const [k, s] of Object.entries(sum.figures)) if (pick(k)) md.push(row([k, line3(s)]));
  }
  md.push("", "## Latency distributions", "");
  md.push(chartProblem ? `(Chart ${chartProblem}.)` : "![latency distributions](latency.png)");
  md.push("", "## Method", "");
  md.push(...meta.method.map((m) => `- ${m}`));
  if (meta.notes.length) md.push("", "## Notes", "", ...meta.notes.map((n) => `- ${n}`));
  // The HTTP section (bench/http.mjs) is kept: rewritten there, not here.
  if (existsSync(join(dir, "http.md"))) md.push("", readFileSync(join(dir, "http.md"), "utf8").trimEnd());
  writeFileSync(join(dir, "RESULTS.md"), md.join("\n") + "\n");
}
