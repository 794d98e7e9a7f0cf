// Many waits at once on the cells of a provider bench (bench/remote.mjs,
// bench/k8s.mjs): w tasks held at a FIFO in the cell's sandbox, a waiting
// get_task on each, the server's resident memory and threads before the
// waits and once every watch's verb runs in the sandbox, then the FIFO
// opened: each wait's wake-up from its task's exit, all of them ending
// together; and the table the reports print of it.
import { watchedTasks } from "../../tests/lib/verbs.mjs";
import { rssBytes } from "./procfs.mjs";
import { readFileSync } from "node:fs";
import { row, range } from "./providerreport.mjs";
import { STAMP_BYTES } from "./wait.mjs";
import { waitFor } from "./rounds.mjs";
import { fmt, quantile } from "./stats.mjs";
import { createCellSandbox, sc } from "./taskcalls.mjs";

// An instance's waits watched at once unless configured (the host's
// default, "watches" in its config).
export const WATCHES = 64;
// Tasks one sandbox of a bench may hold (the supervisor's limit is 128).
export const TASK_LIMIT = 120;

// The waits at once the environment variable name asks for (default 48, 0
// skips them), checked: at most WATCHES, so that every one is watched.
export function manyFromEnv(name) {
  const many = Number(process.env[name] ?? 48);
  if (!Number.isInteger(many) || many < 0 || many > WATCHES) throw new Error(`${name}: a whole number up to ${WATCHES}`);
  return many;
}

const wallMs = () => performance.timeOrigin + performance.now();

// A task held at the FIFO gate: python3, started before the gate opens,
// reads it to its end (blocked in open until a writer comes, then EOF),
// then prints its stamp as remoteload.mjs's tasks do and exits. The
// interpreter's start is behind it, so the tasks' ends cost the machine
// little: what the burst measures is their wake-ups.
const held = (gate) => `exec python3 -c 'import os, time; open("${gate}").read(); print(time.time_ns(), flush=True); os._exit(0)'`;

// The threads of pid, or NaN when it is gone.
function threads(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/status`, "utf8").match(/^Threads:\s+(\d+)/m)[1]);
  } catch {
    return NaN;
  }
}

// Runs the many-waits scenario on cell (its sandbox made, cell.home set)
// with w tasks; `watched` is how many of their waits the cell's instance
// watches at once. Returns { w, watched, seen, rss: [before, watched],
// threads: [before, watched], wake: [ms...], spanMs } where wake is each
// wait's return minus its task's exit stamp and spanMs the first exit to
// the last return.
export async function manyWaits(tb, cell, w, watched) {
  const sandbox_id = cell.sandbox_id;
  const gate = `${cell.home}/many-gate-${cell.tasks}`;
  const r = sc(await tb.call("run_command", { sandbox_id, command: `mkfifo ${gate}` }));
  if (r.exit_code !== 0) throw new Error(`${cell.instance}: mkfifo: ${JSON.stringify(r).slice(0, 200)}`);
  const rss0 = rssBytes(tb.pid);
  const threads0 = threads(tb.pid);
  const handles = [];
  for (let i = 0; i < w; i++) {
    const t = sc(await tb.call("start_task", { sandbox_id, command: held(gate), timeout: 300 }));
    cell.tasks++;
    handles.push({ sandbox_id, task_id: t.task_id });
  }
  const back = new Array(w);
  const waits = handles.map((h, i) =>
    tb.call("get_task", { ...h, stdout_offset: STAMP_BYTES, wait: 60 }, { timeout: 120000 }).then((res) => {
      back[i] = wallMs();
      return sc(res);
    }),
  );
  // Rejects at the first wait that fails (never resolves): a wait failing
  // before they are all awaited ends the scenario with its error, through
  // the bench's own clean-up, not the process as an unhandled rejection.
  const failed = Promise.all(waits).then(() => new Promise(() => {}));
  const ids = new Set(handles.map((h) => h.task_id));
  await Promise.race([waitFor(`${watched} of ${w} waits watched on ${cell.instance}`, async () => watchedTasks(ids) >= watched, 50), failed]);
  // The other waits' first looks, and the watches' connections, settle.
  await new Promise((res) => setTimeout(res, 500));
  const seen = watchedTasks(ids);
  const rss1 = rssBytes(tb.pid);
  const threads1 = threads(tb.pid);
  const g = sc(await tb.call("run_command", { sandbox_id, command: `: > ${gate}` }));
  if (g.exit_code !== 0) throw new Error(`${cell.instance}: opening the gate: ${JSON.stringify(g).slice(0, 200)}`);
  const views = await Promise.all(waits);
  const wake = [];
  const exits = [];
  for (let i = 0; i < w; i++) {
    if (views[i].state !== "succeeded") throw new Error(`${cell.instance}: many waits: state ${views[i].state}`);
    const out = sc(await tb.call("get_task", handles[i])).stdout.trim().split("\n");
    exits.push(Number(BigInt(out[out.length - 1]) / 1000n) / 1000);
    wake.push(back[i] - exits[i]);
  }
  return { w, watched, seen, rss: [rss0, rss1], threads: [threads0, threads1], wake, spanMs: Math.max(...back) - Math.min(...exits) };
}

// Runs manyWaits with w tasks on each of cells (a sandbox made first where
// a cell has none), after one unmeasured run on the first, so that the
// server's first growth for that many threads (its allocator's arenas) is
// in no row. A cell's `watches` is its instance's, WATCHES unless set.
// Returns one row per cell: { instance, provider, latency, kind,
// supervisor (those the cell has), watches, ...manyWaits' }.
export async function manyWaitsCells(tb, cells, w, log) {
  const out = [];
  for (const [i, cell] of [cells[0], ...cells].entries()) {
    if (!cell.home) {
      if (!cell.sandbox_id) await createCellSandbox(tb, cell);
      cell.home = sc(await tb.call("run_command", { sandbox_id: cell.sandbox_id, command: "pwd" })).stdout.trim();
    }
    const watches = cell.watches ?? WATCHES;
    const r = await manyWaits(tb, cell, w, Math.min(w, watches));
    if (i === 0) continue;
    const { instance, provider, latency, kind, supervisor } = cell;
    out.push({ instance, provider, latency, kind, supervisor, watches, ...r });
    log(`${cell.instance}: ${w} waits at once, ${r.seen} watched, wake p50 ${quantile(r.wake, 0.5).toFixed(1)} ms, first exit to last return ${r.spanMs.toFixed(0)} ms`);
  }
  return out;
}

// The report's section on rows (manyWaitsCells'): name(row) names a row's
// cell, single(row) is its one-wait wake-up p50 summary across runs, or
// null; more is what the report says of its cells besides.
export function manyWaitsTable(rows, name, single, more = "") {
  if (!rows.length) return [];
  const mib = (b) => fmt(b / 1048576);
  return [
    "### Many waits at once",
    "",
    `Once per cell, after the runs: ${rows[0].w} tasks in the cell's sandbox, each a python3 that reads one FIFO to its end, then prints its stamp (\`time.time_ns()\`) and exits (\`exec python3 -c 'import os, time; open(FIFO).read(); print(time.time_ns(), flush=True); os._exit(0)'\`: no interpreter starts at the burst), and a waiting get_task on each (\`wait: 60\`, a stdout_offset past the stamp), all in flight together on the one client; once the supervisors' \`wait\` verbs watching them run in the sandbox (counted in /proc: the sandboxes' processes are this host's) and half a second more, the server's VmRSS and threads are read, and a run_command opens the FIFO (\`: > FIFO\`), so every task ends at once. Wake-up per wait: the client's wall clock at its return minus its task's stamp; all the answers leave through one stdio pipe to one client. Before the first row, the same on the first cell unmeasured, so that the server's first growth for that many threads (its allocator's arenas) is in no row. An instance watches up to its \`watches\` waits at once (${WATCHES} unless configured); the others look between pauses.${more ? ` ${more}` : ""}`,
    "",
    row(["cell", "watches", "waits", "verbs watching", "server RSS before → with the waits (MiB)", "per wait (KiB)", "threads before → with", "wake-up p50", "p99", "max", "first exit to last return", "one wait, p50"]),
    row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]),
    ...rows.map((m) =>
      row([
        name(m),
        m.watches,
        m.w,
        m.seen,
        `${mib(m.rss[0])} → ${mib(m.rss[1])}`,
        fmt((m.rss[1] - m.rss[0]) / 1024 / m.w),
        `${m.threads[0]} → ${m.threads[1]}`,
        fmt(quantile(m.wake, 0.5)),
        fmt(quantile(m.wake, 0.99)),
        fmt(Math.max(...m.wake)),
        fmt(m.spanMs),
        single(m) ? range(single(m)) : "n/a",
      ]),
    ),
    "",
  ];
}
