// What bench/remote.mjs times on one cell (a provider instance at one added
// latency): its sandbox and tasks, the interleaved calls against the raw
// one-request baseline, and the wake-up of a waiting get_task.
import { dockerBaseline, e2bBaseline } from "./remotesetup.mjs";
import { interleave } from "./rounds.mjs";
import { createCellSandbox, getTaskParts, sc, startCellTasks, startTaskPart } from "./taskcalls.mjs";

// The running task: a sleep with a duration nothing else uses.
export const REMOTE_SLEEP = ["sleep", "2987"];
// What the wake-up tasks print last: time.time_ns() (19 digits) and a
// newline. busybox's date has no %N, so python3 (in every sandbox the
// supervisor runs in) takes the stamp, replacing the shell and exiting
// without the interpreter's teardown, so that the task's exit follows the
// stamp within a few system calls (until 2026-12 the shell waited for a
// python3 that tore itself down, some milliseconds charged to taskbox).
const STAMP = "exec python3 -c 'import os, time; print(time.time_ns(), flush=True); os._exit(0)'";
const STAMP_BYTES = 20;

export const OPS = ["baseline", "get_task (running)", "get_task (finished)", "start_task", "run_command"];
export const WAKE = "wake-up: task exit to get_task return";

const wallMs = () => performance.timeOrigin + performance.now();

// Creates the cell's sandbox, its running and finished tasks and its
// baseline. cell: { provider, latency, instance, host?, fake? }.
export async function setupCell(tb, cell) {
  const sandbox_id = await createCellSandbox(tb, cell);
  const home = sc(await tb.call("run_command", { sandbox_id, command: "pwd" })).stdout.trim();
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

// `n` tasks `sleep S; <stamp>`, each followed at once by a get_task with
// `wait` and a stdout_offset past the stamp, so only the task's end ends
// the wait. The sample is the client's wall clock at the return minus the
// stamp. A sample whose task printed its stamp before the get_task was
// sent measures no wait: it is dropped and counted as "early".
export async function timeWakeUps(tb, cell, rec, n, sleepS) {
  let early = 0;
  for (let i = 0; i < n; i++) {
    const r = sc(await tb.call("start_task", { sandbox_id: cell.sandbox_id, command: `sleep ${sleepS}; ${STAMP}`, timeout: 120 }));
    cell.tasks++;
    const handle = { sandbox_id: cell.sandbox_id, task_id: r.task_id };
    const sent = wallMs();
    const v = sc(await tb.call("get_task", { ...handle, stdout_offset: STAMP_BYTES, wait: 30 }, { timeout: 90000 }));
    const back = wallMs();
    if (v.state !== "succeeded") throw new Error(`${cell.instance}: waiting get_task: state ${v.state}`);
    const out = sc(await tb.call("get_task", handle)).stdout.trim().split("\n");
    const exitMs = Number(BigInt(out[out.length - 1]) / 1000n) / 1000;
    if (exitMs < sent) early++;
    else rec.sample(WAKE, back - exitMs);
  }
  rec.set("wake-up samples dropped (task ended before the wait began)", early);
}
