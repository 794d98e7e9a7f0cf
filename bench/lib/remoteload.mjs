// What bench/remote.mjs times on one cell (a provider instance at one added
// latency): its sandbox and tasks, the interleaved calls against the raw
// one-request baseline, and the wake-up of a waiting get_task.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { dockerBaseline, e2bBaseline } from "./remotesetup.mjs";
import { interleave } from "./rounds.mjs";
import { createCellSandbox, getTaskParts, sc, startCellTasks, startTaskPart } from "./taskcalls.mjs";
import { STAMP_BYTES } from "./wait.mjs";

// The running task: a sleep with a duration nothing else uses.
export const REMOTE_SLEEP = ["sleep", "2987"];
// What the wake-up tasks print last: time.time_ns() (19 digits) and a
// newline. busybox's date has no %N, so python3 (in every sandbox the
// supervisor runs in) takes the stamp, replacing the shell and exiting
// without the interpreter's teardown, so that the task's exit follows the
// stamp within a few system calls (until 2026-12 the shell waited for a
// python3 that tore itself down, some milliseconds charged to taskbox).
const STAMP = "exec python3 -c 'import os, time; print(time.time_ns(), flush=True); os._exit(0)'";

export const OPS = ["baseline", "get_task (running)", "get_task (finished)", "start_task", "run_command"];
export const WAKE = "wake-up: task exit to get_task return";
// The same wait from the moment its end became visible in the sandbox: the
// final status record renamed into place, seen by bench/seen.c watching the
// task's directory, to the return. Only where the sandbox's files are the
// host's (the e2b fake's).
export const WAKE_SEEN = "wake-up: record in place to get_task return";

const wallMs = () => performance.timeOrigin + performance.now();

// Creates the cell's sandbox, its running and finished tasks and its
// baseline. cell: { provider, latency, instance, host?, fake? }.
export async function setupCell(tb, cell) {
  const sandbox_id = await createCellSandbox(tb, cell);
  const home = sc(await tb.call("run_command", { sandbox_id, command: "pwd" })).stdout.trim();
  cell.home = home;
  const running = await startCellTasks(tb, cell, REMOTE_SLEEP);
  // The small file of the baseline: the running task's status record (one
  // of the files a get_task reads).
  const file = `${home}/.taskbox/tasks/${running.task_id}/status.json`;
  // The provider's own id: the sandbox_id after its "instance:" prefix.
  const own = sandbox_id.slice(sandbox_id.indexOf(":") + 1);
  cell.baseline = cell.provider === "docker" ? dockerBaseline(cell.host, own, file) : await e2bBaseline(cell.fake, own, file);
  await cell.baseline.call();
}

// One run's interleaved calls on a cell: n baselines and n get_tasks of
// each kind, m start_tasks and m run_commands, `chunk` at a time.
export async function timeCalls(tb, cell, rec, n, m, chunk = 3) {
  const parts = [
    { name: "baseline", n, fn: () => cell.baseline.call() },
    ...getTaskParts(tb, cell, n),
    startTaskPart(tb, cell, m),
    {
      name: "run_command",
      n: m,
      fn: async () => {
        const v = sc(await tb.call("run_command", { sandbox_id: cell.sandbox_id, command: "true" }));
        if (v.exit_code !== 0) throw new Error(`${cell.instance}: run_command: ${JSON.stringify(v).slice(0, 200)}`);
      },
    },
  ];
  await interleave(rec, parts, chunk);
}

// Starts bench/seen.c on a task's directory (a host path) and waits for its
// watch to be in place. last() ends it and gives the wall clock in ms of
// the last record it saw put in place.
async function watchRecord(dir) {
  const bin = process.env.BENCH_SEEN_BIN;
  if (!bin) throw new Error("BENCH_SEEN_BIN is not set: run the bench through bench/run.sh");
  const child = spawn(bin, [dir, "status.json"], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => (out += d));
  while (!out.startsWith("ready\n")) {
    if (child.exitCode !== null) throw new Error(`bench-seen ${dir}: exit ${child.exitCode}`);
    await Promise.race([once(child.stdout, "data"), once(child, "exit")]);
  }
  return {
    last: async () => {
      child.stdin.end();
      if (child.exitCode === null) await once(child, "exit");
      const stamps = out.trim().split("\n").slice(1);
      if (child.exitCode !== 0 || !stamps.length) throw new Error(`bench-seen ${dir}: exit ${child.exitCode}, no record seen`);
      return Number(BigInt(stamps[stamps.length - 1]) / 1000n) / 1000;
    },
  };
}

// `n` tasks `sleep S; <stamp>`, each followed at once by a get_task with
// `wait` and a stdout_offset past the stamp, so only the task's end ends
// the wait. The sample is the client's wall clock at the return minus the
// stamp; on e2b a second, the return minus the moment the final record was
// put in place (watchRecord). A sample whose task printed its stamp before
// the get_task was sent measures no wait: it is dropped and counted as
// "early".
export async function timeWakeUps(tb, cell, rec, n, sleepS) {
  let early = 0;
  for (let i = 0; i < n; i++) {
    const r = sc(await tb.call("start_task", { sandbox_id: cell.sandbox_id, command: `sleep ${sleepS}; ${STAMP}`, timeout: 120 }));
    cell.tasks++;
    const handle = { sandbox_id: cell.sandbox_id, task_id: r.task_id };
    const seen = cell.provider === "e2b" ? await watchRecord(`${cell.home}/.taskbox/tasks/${r.task_id}`) : null;
    const sent = wallMs();
    const v = sc(await tb.call("get_task", { ...handle, stdout_offset: STAMP_BYTES, wait: 30 }, { timeout: 90000 }));
    const back = wallMs();
    if (v.state !== "succeeded") throw new Error(`${cell.instance}: waiting get_task: state ${v.state}`);
    const out = sc(await tb.call("get_task", handle)).stdout.trim().split("\n");
    const exitMs = Number(BigInt(out[out.length - 1]) / 1000n) / 1000;
    const seenMs = seen ? await seen.last() : null;
    if (exitMs < sent) early++;
    else {
      rec.sample(WAKE, back - exitMs);
      if (seen) rec.sample(WAKE_SEEN, back - seenMs);
    }
  }
  rec.set("wake-up samples dropped (task ended before the wait began)", early);
}
