// The sandbox and task calls the provider benches (bench/lib/remoteload.mjs
// for bench/remote.mjs, and bench/k8s.mjs) make alike on a cell (a provider
// instance): its sandbox with a running and a finished task, and the timed
// parts get_task (running), get_task (finished) and start_task, for
// bench/lib/rounds.mjs's interleave.
import { waitFor } from "./rounds.mjs";

// A tool call's structured result.
export const sc = (r) => r.structuredContent || JSON.parse(r.content?.[0]?.text || "{}");

// Creates the cell's sandbox on its provider instance: sets and returns
// cell.sandbox_id.
export async function createCellSandbox(tb, cell) {
  const sandbox_id = sc(await tb.call("create_sandbox", { provider: cell.instance, timeout: 3600 })).sandbox_id;
  cell.sandbox_id = sandbox_id;
  return sandbox_id;
}

// Starts the cell's running task (`echo ready; exec SLEEP`, sleepArgv a
// sleep with a duration nothing else uses) and its finished one (`echo
// done`) and waits for both; sets cell.running, cell.finished (their
// get_task arguments) and cell.tasks. Returns start_task's answer for the
// running one.
export async function startCellTasks(tb, cell, sleepArgv) {
  const sandbox_id = cell.sandbox_id;
  const running = sc(await tb.call("start_task", { sandbox_id, command: `echo ready; exec ${sleepArgv.join(" ")}`, timeout: 3600 }));
  const finished = sc(await tb.call("start_task", { sandbox_id, command: "echo done", timeout: 60 }));
  cell.running = { sandbox_id, task_id: running.task_id };
  cell.finished = { sandbox_id, task_id: finished.task_id };
  await waitFor("the running task's first line", async () => sc(await tb.call("get_task", cell.running)).stdout === "ready\n", 50);
  await waitFor("the finished task", async () => sc(await tb.call("get_task", cell.finished)).state === "succeeded", 50);
  cell.tasks = 2;
  return running;
}

// n get_tasks on the running task (state checked `running`) and n on the
// finished one (checked `succeeded` with its output).
export const getTaskParts = (tb, cell, n) => [
  {
    name: "get_task (running)",
    n,
    fn: async () => {
      const v = sc(await tb.call("get_task", cell.running));
      if (v.state !== "running") throw new Error(`${cell.instance}: get_task (running): state ${v.state}`);
    },
  },
  {
    name: "get_task (finished)",
    n,
    fn: async () => {
      const v = sc(await tb.call("get_task", cell.finished));
      if (v.state !== "succeeded" || v.stdout !== "done\n") throw new Error(`${cell.instance}: get_task (finished): ${JSON.stringify(v).slice(0, 200)}`);
    },
  },
];

// m start_tasks of `true`, each counted in cell.tasks.
export const startTaskPart = (tb, cell, m) => ({
  name: "start_task",
  n: m,
  fn: async () => {
    const v = sc(await tb.call("start_task", { sandbox_id: cell.sandbox_id, command: "true", timeout: 60 }));
    if (!v.task_id) throw new Error(`${cell.instance}: start_task: ${JSON.stringify(v).slice(0, 200)}`);
    cell.tasks++;
  },
});
