// Scale and throughput: many running tasks in one sandbox, and a task that
// writes 1 GiB against the raw pipe.
import { cpuTicks, CLK_TCK, parentOf, pidsWithArgv, rssBytes } from "./procfs.mjs";
import { interleave, newRecord, spawnAndWait, waitFor } from "./rounds.mjs";

export const SCALE_SLEEP = ["sleep", "2997"];
export const GIB = 1 << 30;

const sc = (r) => r.structuredContent || JSON.parse(r.content?.[0]?.text || "{}");
const sleepMs = (ms) => new Promise((r) => setTimeout(r, ms));

// CPU used by pids over a window of `ms`, in percent of one core (summed).
async function cpuOver(pids, ms) {
  const before = pids.map(cpuTicks);
  const t0 = performance.now();
  await sleepMs(ms);
  const after = pids.map(cpuTicks);
  const secs = (performance.now() - t0) / 1000;
  let ticks = 0;
  for (let i = 0; i < pids.length; i++)
    if (Number.isFinite(before[i]) && Number.isFinite(after[i])) ticks += after[i] - before[i];
  return (100 * ticks) / CLK_TCK / secs;
}

// Grows one sandbox to each count in `levels` running (idle) tasks, once,
// and at each level measures `runs` times: get_task latency (interleaved
// with pings, for a ratio inside the same window), the server's RSS and the
// supervisors' CPU. Returns one record per run.
export async function scalePhase(ctx, runs, levels = [1, 16, 128], calls = 200, windowMs = 2000) {
  const recs = Array.from({ length: runs }, newRecord);
  const tb = ctx.tb;
  const sandboxId = sc(await tb.call("create_sandbox", { timeout: 3600 })).sandbox_id;
  const tasks = [];
  const command = `exec ${SCALE_SLEEP.join(" ")}`;
  const get = async (level, i) => {
    const task_id = tasks[(i * 7919) % tasks.length];
    const v = sc(await tb.call("get_task", { sandbox_id: sandboxId, task_id }));
    if (v.state !== "running") throw new Error(`get_task with ${level} running: ${v.state}`);
  };
  try {
    for (const level of levels) {
      while (tasks.length < level) {
        const r = sc(await tb.call("start_task", { sandbox_id: sandboxId, command, timeout: 3600 }));
        if (r.state !== "running") throw new Error(`start_task at ${tasks.length}: ${JSON.stringify(r)}`);
        tasks.push(r.task_id);
      }
      ctx.log?.(`scale: ${level} running`);
      for (let i = 0; i < 50; i++) await get(level, i); // warm-up
      for (const rec of recs) {
        await interleave(rec, [
          { name: `get_task with ${level} running`, n: calls, fn: (i) => get(level, i) },
          { name: `ping with ${level} running`, n: calls, fn: () => tb.client.ping() },
        ], 20);
        rec.set(`server RSS with ${level} running`, rssBytes(tb.pid));
        const commands = pidsWithArgv(SCALE_SLEEP);
        const supervisors = [...new Set(commands.map(parentOf))].filter((p) => p > 1);
        rec.set(`supervisors with ${level} running`, supervisors.length);
        rec.set(`supervisors' CPU % with ${level} idle tasks`, await cpuOver(supervisors, windowMs));
        rec.set(`supervisors' RSS with ${level} running`, supervisors.map(rssBytes).reduce((a, b) => a + (b || 0), 0));
      }
    }
  } finally {
    await tb.call("kill_sandbox", { sandbox_id: sandboxId });
  }
  return recs;
}

// Seconds for the raw pipe to carry `bytes`.
async function rawPipeSeconds(bytes) {
  const t0 = performance.now();
  await spawnAndWait(["/bin/sh", "-c", `head -c ${bytes} /dev/zero | cat >/dev/null`]);
  return (performance.now() - t0) / 1000;
}

// Seconds from start_task of a task writing `bytes` to the first get_task
// that reports it ended, with its last view.
async function taskDrainSeconds(tb, sandboxId, bytes) {
  const t1 = performance.now();
  const r = sc(await tb.call("start_task", { sandbox_id: sandboxId, command: `head -c ${bytes} /dev/zero`, timeout: 600 }));
  const args = { sandbox_id: sandboxId, task_id: r.task_id, limit: 1 };
  let last = r;
  if (r.state === "running")
    last = await waitFor("the 1 GiB task", async () => {
      const v = sc(await tb.call("get_task", args));
      return v.state !== "running" ? v : null;
    }, 10, 600000);
  const seconds = (performance.now() - t1) / 1000;
  if (last.state !== "succeeded") throw new Error(`1 GiB task ended ${last.state}`);
  await tb.call("remove_task", { sandbox_id: sandboxId, task_id: r.task_id });
  return { seconds, last };
}

// The raw pipe and a task writing 1 GiB, alternated twice (raw first, then
// task first), each side's best kept: other work on the machine only ever
// slows a side down, so the least disturbed pass is the one to compare.
export async function throughputRound(ctx) {
  const rec = newRecord();
  const bytes = ctx.light ? GIB / 8 : GIB;
  const passes = ctx.light ? 1 : 2;
  let rawS = Infinity;
  let taskS = Infinity;
  let last = null;
  const sandboxId = ctx.tbTasks ? sc(await ctx.tb.call("create_sandbox", { timeout: 3600 })).sandbox_id : null;
  try {
    for (let pass = 0; pass < passes; pass++) {
      const order = pass % 2 === 0 ? ["raw", "task"] : ["task", "raw"];
      for (const side of order) {
        if (side === "raw") rawS = Math.min(rawS, await rawPipeSeconds(bytes));
        else if (sandboxId) {
          const t = await taskDrainSeconds(ctx.tb, sandboxId, bytes);
          if (t.seconds < taskS) ({ seconds: taskS, last } = t);
        }
      }
    }
  } finally {
    if (sandboxId) await ctx.tb.call("kill_sandbox", { sandbox_id: sandboxId });
  }
  rec.set("raw pipe MiB/s", bytes / 2 ** 20 / rawS);
  if (!sandboxId) return rec;
  rec.set("1 GiB task: time to terminal state (s)", taskS);
  rec.set("1 GiB task drain MiB/s", bytes / 2 ** 20 / taskS);
  rec.set("1 GiB task stdout_truncated", last.stdout_truncated ? 1 : 0);
  return rec;
}
