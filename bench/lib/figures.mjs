// From raw per-run records to figures, ratios and budget verdicts. Every
// ratio is taken inside one run (both sides measured interleaved, minutes
// apart at most) and only then summarised across runs.
import { quantile, summary } from "./stats.mjs";

const MiB = 2 ** 20;

// The value of each figure in one run: latency series become their p50 (and
// the scale series also their p99), sizes become MiB.
export function runFigures(records) {
  const f = {};
  for (const rec of records) {
    for (const [name, s] of Object.entries(rec.samples)) {
      if (/RSS/.test(name)) f[`${name} (MiB)`] = quantile(s, 0.5) / MiB;
      else if (/connect/.test(name)) f[`${name} (ms)`] = quantile(s, 0.5);
      else {
        f[`${name} p50 (ms)`] = quantile(s, 0.5);
        if (/with \d+ running|^wait:/.test(name)) f[`${name} p99 (ms)`] = quantile(s, 0.99);
      }
    }
    for (const [name, v] of Object.entries(rec.values)) f[/RSS/.test(name) ? `${name} (MiB)` : name] = /RSS/.test(name) ? v / MiB : v;
  }
  return f;
}

const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN);

// The wait figure's limits: a waiting get_task returns this soon after its
// task exits, at the p50 and at the p99 of a run's waits.
const WAIT_P50_MS = 5;
const WAIT_P99_MS = 10;
const WAIT_RATIO = `wait after exit / limit (the larger of p50 / ${WAIT_P50_MS} ms and p99 / ${WAIT_P99_MS} ms)`;

// The pairwise ratios of one run.
export function runRatios(f) {
  const r = {};
  const p = (n) => f[`${n} p50 (ms)`];
  r["get_task (running) / taskbox ping"] = ratio(p("taskbox get_task (running)"), p("taskbox ping beside get_task (running)"));
  r["get_task (finished) / taskbox ping"] = ratio(p("taskbox get_task (finished)"), p("taskbox ping beside get_task (finished)"));
  r["DC read_process_output (running) / get_task (running)"] = ratio(p("DC read_process_output (running)"), p("taskbox get_task (running)"));
  r["DC read_process_output (finished) / get_task (finished)"] = ratio(p("DC read_process_output (finished)"), p("taskbox get_task (finished)"));
  r["start_task / sh -c true spawn"] = ratio(p("taskbox start_task"), p("sh -c true spawn"));
  r["DC start_process / start_task"] = ratio(p("DC start_process"), p("taskbox start_task"));
  r["taskbox ping / C echo ping"] = ratio(p("taskbox ping"), p("echo ping"));
  r["start_task / supervisor start verb, run directly"] = ratio(p("taskbox start_task"), p("supervisor start verb, run directly"));
  r["supervisor start verb, run directly / sh -c true spawn"] = ratio(p("supervisor start verb, run directly"), p("sh -c true spawn"));
  r["python3 -I -S -c pass / sh -c true spawn"] = ratio(p("python3 -I -S -c pass spawn"), p("sh -c true spawn"));
  r["DC ping / taskbox ping"] = ratio(p("DC ping"), p("taskbox ping"));
  r["DC force_terminate / cancel_task"] = ratio(p("DC force_terminate"), p("taskbox cancel_task"));
  r["taskbox connect / C echo connect"] = ratio(f["taskbox connect (ms)"], f["echo connect (ms)"]);
  r["DC connect / taskbox connect"] = ratio(f["DC connect (ms)"], f["taskbox connect (ms)"]);
  r["DC idle RSS / taskbox idle RSS"] = ratio(f["DC idle RSS (MiB)"], f["taskbox idle RSS (MiB)"]);
  r["1 GiB drain / raw pipe"] = ratio(f["1 GiB task drain MiB/s"], f["raw pipe MiB/s"]);
  r["get_task with 128 running / ping, same window"] = ratio(p("get_task with 128 running"), p("ping with 128 running"));
  r["get_task p99 with 128 / p50 with 1"] = ratio(f["get_task with 128 running p99 (ms)"], f["get_task with 1 running p50 (ms)"]);
  const wait = "wait: task exit to get_task return";
  r[WAIT_RATIO] = Math.max(ratio(f[`${wait} p50 (ms)`], WAIT_P50_MS), ratio(f[`${wait} p99 (ms)`], WAIT_P99_MS));
  return r;
}

// The budgets of the design, each a figure or ratio, a comparison and a limit.
export const BUDGETS = [
  { what: "get_task (running) p50 <= 3x ping p50", key: "get_task (running) / taskbox ping", op: "<=", limit: 3, unit: "x" },
  { what: "get_task (finished) p50 <= 3x ping p50", key: "get_task (finished) / taskbox ping", op: "<=", limit: 3, unit: "x" },
  { what: "get_task (running) >= 10x faster than DC read_process_output", key: "DC read_process_output (running) / get_task (running)", op: ">=", limit: 10, unit: "x" },
  { what: "get_task (finished) >= 10x faster than DC read_process_output", key: "DC read_process_output (finished) / get_task (finished)", op: ">=", limit: 10, unit: "x" },
  { what: "start_task p50 <= 5x sh -c true spawn", key: "start_task / sh -c true spawn", op: "<=", limit: 5, unit: "x" },
  { what: "start_task faster than DC start_process", key: "DC start_process / start_task", op: ">", limit: 1, unit: "x" },
  { what: "ping within 1.5x of the C echo loop", key: "taskbox ping / C echo ping", op: "<=", limit: 1.5, unit: "x" },
  { what: "connect (spawn + initialize) < 50 ms", key: "taskbox connect (ms)", op: "<", limit: 50, unit: "ms" },
  { what: "RSS idle < 8 MiB", key: "taskbox idle RSS (MiB)", op: "<", limit: 8, unit: "MiB" },
  { what: "RSS with 128 running tasks < 32 MiB", key: "server RSS with 128 running (MiB)", op: "<", limit: 32, unit: "MiB" },
  { what: `waiting get_task returns <= ${WAIT_P50_MS} ms p50 and <= ${WAIT_P99_MS} ms p99 after the task exits`, key: WAIT_RATIO, op: "<=", limit: 1, unit: "x" },
  { what: "1 GiB drain >= 50% of raw pipe throughput", key: "1 GiB drain / raw pipe", op: ">=", limit: 0.5, unit: "x" },
];

const holds = (v, op, limit) =>
  ({ "<=": v <= limit, ">=": v >= limit, "<": v < limit, ">": v > limit })[op];

// Summaries across runs of every figure and ratio, and the verdicts: a budget
// passes when the median across runs meets it (the worst run is shown too).
export function summarise(runs) {
  const figures = {};
  const ratios = {};
  for (const run of runs) {
    for (const [k, v] of Object.entries(run.figures)) (figures[k] ||= []).push(v);
    for (const [k, v] of Object.entries(run.ratios)) (ratios[k] ||= []).push(v);
  }
  const fs = Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, summary(v)]));
  const rs = Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, summary(v)]));
  const budgets = BUDGETS.map((b) => {
    const s = rs[b.key] || fs[b.key] || summary([]);
    const verdict = s.n === 0 ? "NOT MEASURED" : holds(s.median, b.op, b.limit) ? "PASS" : "FAIL";
    const worst = b.op[0] === "<" ? s.max : s.min;
    return { ...b, ...s, worst, verdict, worstHolds: s.n > 0 && holds(worst, b.op, b.limit) };
  });
  return { figures: fs, ratios: rs, budgets };
}
