// Waiting: how long after a task's exit a get_task that waits for it
// returns, on the local provider.
import { newRecord } from "./rounds.mjs";
import { fmt, quantile } from "./stats.mjs";

export const WAIT_FIGURE = "wait: task exit to get_task return";
// Waits per run: enough for a p99 that is not just the run's maximum.
export const WAIT_SAMPLES = 100;
// What a task's stamp prints (bench/stamp.c, or the remote benches' python3
// line): the wall clock in ns, 19 digits, and a newline.
export const STAMP_BYTES = 20;
const sc = (r) => r.structuredContent || JSON.parse(r.content?.[0]?.text || "{}");

// The wall clock in ms with sub-ms precision (the same clock `date` reads).
const wallMs = () => performance.timeOrigin + performance.now();

// Per run, `n` tasks `sleep 0.2; exec STAMP` (ctx.stampBin, bench/stamp.c:
// the task's last process reads the wall clock, prints it and exits a few
// system calls later), each followed at once by a get_task with `wait` and
// a stdout_offset past that output; the latency is the client's wall clock
// at the return minus the printed time. Logs each run's p50 and p99 through
// ctx.log when given. Returns one record per run, or [] when get_task
// cannot wait.
export async function waitPhase(ctx, runs, n = WAIT_SAMPLES) {
  const tb = ctx.tb;
  const tool = (tb.tools || []).find((t) => t.name === "get_task");
  if (!tool?.inputSchema?.properties?.wait) return [];
  const recs = Array.from({ length: runs }, newRecord);
  const sandboxId = sc(await tb.call("create_sandbox", { timeout: 3600 })).sandbox_id;
  try {
    for (const rec of recs) {
      for (let i = 0; i < n; i++) {
        const r = sc(await tb.call("start_task", { sandbox_id: sandboxId, command: `sleep 0.2; exec '${ctx.stampBin}'`, timeout: 60 }));
        const handle = { sandbox_id: sandboxId, task_id: r.task_id };
        // Past the 20 bytes the task prints, so new output does not end
        // the wait: only the task's end does.
        const v = sc(await tb.call("get_task", { ...handle, stdout_offset: STAMP_BYTES, wait: 30 }));
        const back = wallMs();
        if (v.state !== "succeeded") throw new Error(`waiting get_task: state ${v.state}`);
        const out = sc(await tb.call("get_task", handle)).stdout;
        const lines = out.trim().split("\n");
        const exitMs = Number(BigInt(lines[lines.length - 1]) / 1000n) / 1000;
        rec.sample(WAIT_FIGURE, back - exitMs);
        await tb.call("remove_task", { sandbox_id: sandboxId, task_id: r.task_id });
      }
      const s = rec.samples[WAIT_FIGURE];
      ctx.log?.(`wait run ${recs.indexOf(rec) + 1}/${runs}: p50 ${fmt(quantile(s, 0.5))} ms, p99 ${fmt(quantile(s, 0.99))} ms (${s.length} waits)`);
    }
  } finally {
    await tb.call("kill_sandbox", { sandbox_id: sandboxId });
  }
  return recs;
}
